// Request bodies for identities: the fields of an individual or an organization. `identity_type` is
// required; every other text field defaults to empty; `dob` is a time like any other on the wire.

import { z } from 'zod';
import type { IdentityFields } from '../../engine/records.js';
import { metaDataSchema, NAME_LENGTH_MAX } from './common-schemas.js';
import { parseTimeInput } from './time-input.js';

const text = z.string().max(NAME_LENGTH_MAX).optional().transform((value) => value ?? '');

const dobInput = z.union([z.string().max(64), z.null()]).optional().transform((value, context) => {
  if (value === undefined || value === null) return 0;
  const parsed = parseTimeInput(value);
  if (parsed.ok) return parsed.value;
  context.addIssue({ code: 'custom', message: parsed.rejection.message });
  return z.NEVER;
});

const identityShape = z.object({
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
});

function identityFields(input: z.output<typeof identityShape>): IdentityFields {
  return { ...input, meta_data: input.meta_data ?? {} };
}

/** The fields of an identity as PUT replaces them (an `identity_id` in the body is ignored, as in Blnk). */
export const identitySchema = identityShape.transform(identityFields);

const IDENTITY_ID_PREFIX = 'idt_';
const HEX = '[0-9a-fA-F]';
const UUID_TEXT = `${HEX}{8}-${HEX}{4}-${HEX}{4}-${HEX}{4}-${HEX}{12}`;
/**
 * The UUID texts Go's uuid.Parse takes, which Blnk checks a caller's identity id with: the usual 36
 * characters, 32 hex digits, `urn:uuid:` (any case) before the 36, or the 36 in braces (Go does not look
 * at the braces themselves; here they must be braces).
 */
const UUID_FORMS = new RegExp(`^(?:${UUID_TEXT}|${HEX}{32}|[uU][rR][nN]:[uU][uU][iI][dD]:${UUID_TEXT}|\\{${UUID_TEXT}\\})$`);

/**
 * Blnk's shape check of a caller-chosen identity id (database/identity.go CreateIdentity): `idt_` and a
 * UUID. The id is kept as written; an empty one asks for a generated id, as a missing one does.
 */
const identityIdSchema = z.string().max(64, "identity_id suffix after 'idt_' must be a valid UUID")
  .refine((id) => id === '' || id.startsWith(IDENTITY_ID_PREFIX), "identity_id must start with the 'idt_' prefix")
  .refine((id) => !id.startsWith(IDENTITY_ID_PREFIX) || UUID_FORMS.test(id.slice(IDENTITY_ID_PREFIX.length)),
    "identity_id suffix after 'idt_' must be a valid UUID");

/** A new identity (POST /identities): the fields, and the id when the caller chooses it. */
export const createIdentitySchema = identityShape
  .extend({ identity_id: identityIdSchema.optional() })
  .transform(({ identity_id, ...rest }) => ({
    fields: identityFields(rest),
    // Blnk generates an id for an empty one, as for a missing one.
    identity_id: identity_id === '' ? undefined : identity_id,
  }));

export const metadataUpdateSchema = z.object({ meta_data: metaDataSchema });
