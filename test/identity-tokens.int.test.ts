// Identity tokenization against a real server: Blnk's five routes with the statuses its API tests expect
// (200, 409 already tokenized, 400 not tokenizable / not tokenized, 404 unknown identity, 403 without a
// key), tokens stable for the same value and key, reversible only with the key, different per field, and
// the change surviving a restart (the log holds tokens, never the key).

import t from 'tap';
import { IdentityTokens } from '../http/identity-tokens.js';
import { expectError } from './helpers/http-fixture.js';
import { startTestServer, tempDataDir } from './helpers/test-server.js';

const KEY = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');

const PERSON = { identity_type: 'individual', first_name: 'Ada', last_name: 'Lovelace', email_address: 'ada@example.com', phone_number: '+4420000', street: '1 Loop Road', category: 'vip' };

t.test('tokens are stable per field and key, and reversible only with the key', async (t) => {
  const tokens = new IdentityTokens(KEY);
  const token = tokens.tokenize('first_name', 'Ada');
  t.equal(tokens.tokenize('first_name', 'Ada'), token, 'same value, field and key: same token');
  t.not(tokens.tokenize('last_name', 'Ada'), token, 'another field: another token');
  t.not(tokens.tokenize('first_name', 'Adb'), token, 'another value: another token');
  t.notMatch(token, /Ada/, 'the value does not show');
  t.equal(tokens.detokenize('first_name', token), 'Ada');
  t.equal(tokens.detokenize('last_name', token), undefined, 'a token moved to another field does not open');
  t.equal(new IdentityTokens(Buffer.alloc(32, 7)).detokenize('first_name', token), undefined, 'another key does not open it');
  t.not(new IdentityTokens(Buffer.alloc(32, 7)).tokenize('first_name', 'Ada'), token, 'another key: another token');
  t.equal(tokens.detokenize('first_name', 'tok_' + 'A'.repeat(40)), undefined, 'forged token');
  t.equal(tokens.detokenize('first_name', 'Ada'), undefined, 'not a token');
  t.equal(tokens.detokenize('street', tokens.tokenize('street', '')), '', 'the empty value round-trips');
});

t.test('the routes, as Blnk answers them', async (t) => {
  const dataDir = tempDataDir();
  let server = await startTestServer({ dataDir }, { tokenizationKey: KEY });
  t.teardown(() => server.stop());
  const id = (await server.request('POST', '/identities', PERSON)).body.identity_id as string;

  const one = await server.request('POST', `/identities/${id}/tokenize/firstName`);
  t.equal(one.status, 200);
  t.same(one.body, { message: 'Field tokenized successfully' });
  expectError(t, await server.request('POST', `/identities/${id}/tokenize/firstName`), 409, 'IDT_FIELD_ALREADY_TOKENIZED', 'twice');
  expectError(t, await server.request('POST', `/identities/${id}/tokenize/category`), 400, 'IDT_FIELD_NOT_TOKENIZABLE', 'not tokenizable');
  expectError(t, await server.request('POST', '/identities/idt_nonexistent/tokenize/firstName'), 404, 'IDT_NOT_FOUND', 'unknown identity');
  expectError(t, await server.request('GET', `/identities/${id}/detokenize/phoneNumber`), 400, 'IDT_FIELD_NOT_TOKENIZED', 'not tokenized');
  expectError(t, await server.request('GET', '/identities/idt_nonexistent/detokenize/lastName'), 404, 'IDT_NOT_FOUND', 'unknown identity');
  expectError(t, await server.request('POST', `/identities/${id}/tokenize`, { fields: [] }), 400, 'GEN_VALIDATION_ERROR', 'empty list');
  expectError(t, await server.request('GET', '/identities/idt_nonexistent/tokenized-fields'), 404, 'IDT_NOT_FOUND', 'unknown identity');

  const stored = (await server.request('GET', `/identities/${id}`)).body;
  t.match(stored.first_name, /^tok_/, 'the record holds the token');
  t.same(stored.meta_data, { tokenized_fields: { FirstName: true } }, 'marked where Blnk marks it');
  const field = await server.request('GET', `/identities/${id}/detokenize/firstName`);
  t.same(field.body, { field: 'firstName', value: 'Ada' });

  const many = await server.request('POST', `/identities/${id}/tokenize`, { fields: ['email_address', 'PhoneNumber'] });
  t.same(many.body, { message: 'Fields tokenized successfully' });
  t.same((await server.request('GET', `/identities/${id}/tokenized-fields`)).body.tokenized_fields.sort(), ['EmailAddress', 'FirstName', 'PhoneNumber']);
  // A list with one bad name changes nothing.
  expectError(t, await server.request('POST', `/identities/${id}/tokenize`, { fields: ['street', 'category'] }), 400, 'IDT_FIELD_NOT_TOKENIZABLE', 'one bad name');
  t.equal((await server.request('GET', `/identities/${id}`)).body.street, '1 Loop Road', 'nothing tokenized by a refused list');

  t.same((await server.request('POST', `/identities/${id}/detokenize`, { fields: ['firstName'] })).body, { fields: { firstName: 'Ada' } });
  t.same((await server.request('POST', `/identities/${id}/detokenize`, { fields: [] })).body, {
    fields: { FirstName: 'Ada', EmailAddress: 'ada@example.com', PhoneNumber: '+4420000' },
  }, 'no names: every tokenized field');
  expectError(t, await server.request('POST', `/identities/${id}/detokenize`, { fields: ['street'] }), 400, 'IDT_FIELD_NOT_TOKENIZED', 'untokenized in a list');

  // The same value in another identity gets the same token: equality filters still find it.
  const twin = (await server.request('POST', '/identities', PERSON)).body.identity_id as string;
  await server.request('POST', `/identities/${twin}/tokenize/first_name`);
  t.equal((await server.request('GET', `/identities/${twin}`)).body.first_name, stored.first_name, 'stable token');

  await server.stop();
  server = await startTestServer({ dataDir }, { tokenizationKey: KEY });
  t.same((await server.request('GET', `/identities/${id}/detokenize/firstName`)).body, { field: 'firstName', value: 'Ada' }, 'after a restart');
  await server.stop();
  server = await startTestServer({ dataDir });
  expectError(t, await server.request('GET', `/identities/${id}/detokenize/firstName`), 403, 'IDT_TOKENIZATION_DISABLED', 'no key: refused');
  expectError(t, await server.request('POST', `/identities/${id}/tokenize/lastName`), 403, 'IDT_TOKENIZATION_DISABLED', 'no key: refused');
  t.match((await server.request('GET', `/identities/${id}`)).body.first_name, /^tok_/, 'the token is in the log, not the value');
});
