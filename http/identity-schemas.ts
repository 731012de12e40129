// Request bodies for identities: the fields of an individual or an organization. `identity_type` is
// required; every other text field defaults to empty; `dob` is a time like any other on the wire.

import { z } from 'zod';
import type { IdentityFields } from '../engine/records.js';
import { metaDataSchema, NAME_LENGTH_MAX } from './common-schemas.js';
import { parseTimeInput } from './time-input.js';

const text = z.string().max(NAME_LENGTH_MAX).optional().transform((value) => value ?? '');

const dobInput = z.union([z.string().max(64), z.null()]).optional().transform((value, context) => {
  if (value === undefined || value === null) return 0;
  const parsed = parseTimeInput(value);
  if (parsed.ok) return parsed.epochMs;
  context.addIssue({ code: 'custom', message: parsed.message });
  return z.NEVER;
});

export const identitySchema = z
  .object({
    identity_type: z.enum(['individual', 'organization'], { message: 'must be individual or organization' }),
    organization_name: text,
    first_name: text,
    last_name: text,
    other_names: text,
    gender: text,
    dob: dobInput,
    email_address: text,
    phone_number: text,
    nationality: text,
    category: text,
    street: text,
    city: text,
    state: text,
    country: text,
    post_code: text,
    meta_data: z.union([metaDataSchema, z.null()]).optional(),
  })
  .transform((input): IdentityFields => ({ ...input, meta_data: input.meta_data ?? {} }));

export const metadataUpdateSchema = z.object({ meta_data: metaDataSchema });
