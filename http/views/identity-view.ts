// Identities on the wire live in wire/identity-view.ts (hook and notification payloads render them too);
// the HTTP layer's modules import them from here.

export { identityJsonSchema, identityView } from '../../wire/identity-view.js';
