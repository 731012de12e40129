// Identities as clients see them: every field of the record, times as ISO 8601 (the zero time when unset).

import type { IdentityRecord } from '../engine/records.js';
import { timeText } from '../wire/views.js';

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
