// Identities as clients see them: every field of the record, times as ISO 8601 (the zero time when unset).

import type { IdentityRecord } from '../engine/records.js';
import { z } from 'zod';
import { metaDataJsonSchema, timeText, timeTextSchema } from './views.js';

/** What identityView renders, for the API reference (openapi/). */
export const identityJsonSchema = z.object({
  identity_id: z.string(),
  identity_type: z.enum(['individual', 'organization']),
  organization_name: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  other_names: z.string(),
  gender: z.string(),
  dob: timeTextSchema,
  email_address: z.string(),
  phone_number: z.string(),
  nationality: z.string(),
  category: z.string(),
  street: z.string(),
  country: z.string(),
  state: z.string(),
  post_code: z.string(),
  city: z.string(),
  created_at: timeTextSchema,
  meta_data: metaDataJsonSchema,
}).meta({ id: 'Identity' });

export function identityView(identity: IdentityRecord): Record<string, unknown> {
  return {
    identity_id: identity.identity_id,
    identity_type: identity.identity_type,
    organization_name: identity.organization_name,
    first_name: identity.first_name,
    last_name: identity.last_name,
    other_names: identity.other_names,
    gender: identity.gender,
    dob: timeText(identity.dob),
    email_address: identity.email_address,
    phone_number: identity.phone_number,
    nationality: identity.nationality,
    category: identity.category,
    street: identity.street,
    country: identity.country,
    state: identity.state,
    post_code: identity.post_code,
    city: identity.city,
    created_at: timeText(identity.created_at),
    meta_data: identity.meta_data,
  };
}
