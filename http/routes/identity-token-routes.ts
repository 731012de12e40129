// Identity tokenization, Blnk's five routes: tokenize one field or several (the value in the record is
// replaced by its token, http/identity-tokens.ts), detokenize one field or several (or every tokenized
// one), and list the tokenized fields. Which fields are tokenized is recorded where Blnk keeps it, in the
// identity's `meta_data.tokenized_fields` (`{"FirstName": true}`), so the change is one ordinary
// identity update in the log: replay needs no key, and the key never reaches the log.
//
// Field names are taken as Blnk takes them (`firstName`, `first_name` or `FirstName`). Checks run in
// Blnk's order: the field name, then the identity (404), then whether it is tokenized already, then the
// key (403 when tokenization is off).

import type { Router } from '@koa/router';
import { z } from 'zod';
import type { IdentityFields, IdentityRecord, MetaData } from '../../engine/records.js';
import { ApiError } from '../api-error.js';
import { IdentityTokens } from '../identity-tokens.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import { answers, describeRoute } from '../openapi/route-docs.js';

/** Tokenizable fields: the record's field and the name Blnk records it under. */
const TOKENIZABLE = {
  first_name: 'FirstName', last_name: 'LastName', other_names: 'OtherNames', email_address: 'EmailAddress',
  phone_number: 'PhoneNumber', street: 'Street', post_code: 'PostCode',
} as const;
type TokenField = keyof typeof TOKENIZABLE;
/** Names one request may list (more than the tokenizable fields is never needed). */
const FIELDS_MAX = 32;

export const fieldListSchema = z.object({ fields: z.array(z.string().max(64)).max(FIELDS_MAX).optional() });

/** `firstName`, `first_name`, `FirstName`, `FIRST_NAME` -> `first_name`, if tokenizable. */
function tokenField(name: string): TokenField | undefined {
  const snake = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  return Object.hasOwn(TOKENIZABLE, snake) ? (snake as TokenField) : undefined;
}

function tokenizedMarks(identity: IdentityRecord): Record<string, unknown> {
  const marks = identity.meta_data.tokenized_fields;
  return typeof marks === 'object' && marks !== null && !Array.isArray(marks) ? (marks as Record<string, unknown>) : {};
}

function isTokenized(identity: IdentityRecord, field: TokenField): boolean {
  return tokenizedMarks(identity)[TOKENIZABLE[field]] === true;
}

export function identityTokenRoutes(router: Router, core: LedgerCore, secret: Buffer | undefined): void {
  const tokens = secret ? new IdentityTokens(secret) : undefined;

  const requireTokens = (): IdentityTokens => {
    if (tokens) return tokens;
    throw new ApiError('IDT_TOKENIZATION_DISABLED', 'tokenization is disabled: set tokenization.secret (FOLIO_TOKENIZATION_SECRET) to a 32-byte value');
  };
  const identityOf = async (id: string): Promise<IdentityRecord> => {
    const identity = await core.view.identity(id);
    if (!identity) throw new ApiError('IDT_NOT_FOUND', `identity ${id} not found`);
    return identity;
  };
  const fieldOf = (name: string): TokenField => {
    const field = tokenField(name);
    if (!field) throw new ApiError('IDT_FIELD_NOT_TOKENIZABLE', `field ${name} is not tokenizable`, { field: 'not tokenizable' });
    return field;
  };

  /**
   * Tokenizes the named fields in one identity update (all or none), refused if the identity changed
   * since it was read here (a concurrent tokenization would otherwise be overwritten).
   */
  const tokenizeFields = async (id: string, names: string[]): Promise<number> => {
    const fields = names.map(fieldOf);
    const identity = await identityOf(id);
    const updated: IdentityFields = { ...identity };
    const marks: MetaData = { ...tokenizedMarks(identity) };
    for (const [index, field] of fields.entries()) {
      if (isTokenized(identity, field) || marks[TOKENIZABLE[field]] === true) {
        throw new ApiError('IDT_FIELD_ALREADY_TOKENIZED', `field ${names[index]} is already tokenized`);
      }
      updated[field] = requireTokens().tokenize(field, identity[field]);
      marks[TOKENIZABLE[field]] = true;
    }
    updated.meta_data = { ...identity.meta_data, tokenized_fields: marks };
    return accepted(await core.run({ op: 'identity.update', identity_id: id, fields: updated, expected: identity })).seq;
  };

  const detokenizeField = (identity: IdentityRecord, name: string): string => {
    const field = tokenField(name);
    if (!field || !isTokenized(identity, field)) throw new ApiError('IDT_FIELD_NOT_TOKENIZED', `field ${name} is not tokenized`);
    const value = requireTokens().detokenize(field, identity[field]);
    if (value === undefined) throw new ApiError('IDT_FIELD_NOT_TOKENIZED', `field ${name} does not hold a token this server's key made`);
    return value;
  };

  const message = z.object({ message: z.string() });
  const values = z.object({ fields: z.record(z.string(), z.string()) });
  const TOKEN_ERRORS = ['IDT_NOT_FOUND', 'IDT_FIELD_NOT_TOKENIZABLE', 'IDT_FIELD_ALREADY_TOKENIZED', 'IDT_TOKENIZATION_DISABLED', 'GEN_CONFLICT'] as const;
  const DETOKEN_ERRORS = ['IDT_NOT_FOUND', 'IDT_FIELD_NOT_TOKENIZED', 'IDT_TOKENIZATION_DISABLED'] as const;
  const fieldWords = { field: 'first_name, last_name, other_names, email_address, phone_number, street or post_code (camelCase and PascalCase too)' };

  describeRoute(router, 'GET /identities/:id/tokenized-fields', { tag: 'Identities', summary: 'Which fields of an identity are tokenized', answers: answers(200, 'The fields', z.object({ tokenized_fields: z.array(z.string()) })), errors: ['IDT_NOT_FOUND'] });
  router.get('/identities/:id/tokenized-fields', async (ctx) => {
    const identity = await identityOf(ctx.params.id as string);
    const names = Object.entries(tokenizedMarks(identity)).filter(([, marked]) => marked === true).map(([name]) => name);
    await respond(ctx, core, 200, { tokenized_fields: names });
  });

  describeRoute(router, 'POST /identities/:id/tokenize/:field', { tag: 'Identities', summary: 'Replace a field by its token', params: fieldWords, answers: answers(200, 'Done', message), errors: TOKEN_ERRORS });
  router.post('/identities/:id/tokenize/:field', async (ctx) => {
    const seq = await tokenizeFields(ctx.params.id as string, [ctx.params.field as string]);
    await respond(ctx, core, 200, { message: 'Field tokenized successfully' }, seq);
  });

  describeRoute(router, 'POST /identities/:id/tokenize', { tag: 'Identities', summary: 'Replace several fields by their tokens, all or none', body: fieldListSchema, bodyExample: { fields: ['first_name', 'email_address'] }, answers: answers(200, 'Done', message), errors: TOKEN_ERRORS });
  router.post('/identities/:id/tokenize', async (ctx) => {
    const { fields } = validate(fieldListSchema, ctx.request.body ?? {});
    if (!fields || fields.length === 0) throw new ApiError('GEN_VALIDATION_ERROR', 'at least one field must be specified', { fields: 'at least one field must be specified' });
    const seq = await tokenizeFields(ctx.params.id as string, fields);
    await respond(ctx, core, 200, { message: 'Fields tokenized successfully' }, seq);
  });

  describeRoute(router, 'GET /identities/:id/detokenize/:field', { tag: 'Identities', summary: 'The value behind a tokenized field', params: fieldWords, answers: answers(200, 'The value', z.object({ field: z.string(), value: z.string() })), errors: DETOKEN_ERRORS });
  router.get('/identities/:id/detokenize/:field', async (ctx) => {
    const identity = await identityOf(ctx.params.id as string);
    const field = ctx.params.field as string;
    await respond(ctx, core, 200, { field, value: detokenizeField(identity, field) });
  });

  describeRoute(router, 'POST /identities/:id/detokenize', { tag: 'Identities', summary: 'The values behind several tokenized fields (none named: all of them)', body: fieldListSchema, answers: answers(200, 'The values', values), errors: DETOKEN_ERRORS });
  router.post('/identities/:id/detokenize', async (ctx) => {
    const { fields } = validate(fieldListSchema, ctx.request.body ?? {});
    const identity = await identityOf(ctx.params.id as string);
    // No names: every tokenized field, under the name Blnk records it by.
    const names = fields && fields.length > 0
      ? fields
      : Object.entries(tokenizedMarks(identity)).filter(([, marked]) => marked === true).map(([name]) => name);
    const values: Record<string, string> = {};
    for (const name of names) values[name] = detokenizeField(identity, name);
    await respond(ctx, core, 200, { fields: values });
  });
}
