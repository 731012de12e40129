// Identities over HTTP (create, read, list, replace, delete, every field of the contract, refusals),
// metadata updates on each kind of record (merge, errors, routes it must not shadow), and balance history
// (GET /balances/:id/at, from the index and folded from the log) checked against the fold of the log.

import t from 'tap';
import { foldBalance } from '../engine/balance-fold.js';
import type { LedgerEvent } from '../engine/events.js';
import { balanceView } from '../wire/views.js';
import { toJsonText } from '../wire/json-text.js';
import { startScopedServer } from './helpers/scoped-server.js';
import type { TestServer } from './helpers/test-server.js';

const FULL_IDENTITY = {
  identity_type: 'individual', organization_name: '', first_name: 'Alice', last_name: 'Smith', other_names: 'Marie', gender: 'female',
  dob: '1985-05-15T00:00:00Z', email_address: 'alice.smith@example.com', phone_number: '+1234567890', nationality: 'Canadian',
  category: 'customer', street: '789 Elm St', country: 'Canada', state: 'Ontario', post_code: 'M4B 1B3', city: 'Toronto',
  meta_data: { customer_id: 'CUST123456', verification: { status: 'verified', level: 2 } },
};

async function post(server: TestServer, route: string, body: unknown): Promise<any> {
  const response = await server.request('POST', route, body);
  if (response.status >= 300) throw new Error(`POST ${route}: ${response.status} ${response.text}`);
  return response.body;
}

t.test('identities: every field, replace, list, delete', async (t) => {
  const server = await startScopedServer(t);
  const created = await server.request('POST', '/identities', FULL_IDENTITY);
  t.equal(created.status, 201);
  const identity = created.body;
  t.match(identity.identity_id, /^idt_/);
  t.match(identity.created_at, /^\d{4}-\d\d-\d\dT/);
  for (const [field, value] of Object.entries(FULL_IDENTITY)) {
    if (field === 'dob') t.equal(identity.dob, '1985-05-15T00:00:00Z', 'dob is a time, written as Go writes RFC 3339');
    else t.same(identity[field], value, field);
  }
  const read = await server.request('GET', `/identities/${identity.identity_id}`);
  t.same(read.body, identity);

  const replaced = await server.request('PUT', `/identities/${identity.identity_id}`, { identity_type: 'organization', organization_name: 'Smith Holdings' });
  t.equal(replaced.status, 200);
  t.equal(replaced.body.organization_name, 'Smith Holdings');
  t.equal(replaced.body.first_name, '', 'PUT replaces: fields not sent are emptied');
  t.equal(replaced.body.dob, '0001-01-01T00:00:00Z', 'an unset dob is the zero time');
  t.equal(replaced.body.created_at, identity.created_at, 'creation time stays');

  const second = await post(server, '/identities', { identity_type: 'individual', first_name: 'Bob' });
  const list = await server.request('GET', '/identities');
  t.same(list.body.map((item: any) => item.identity_id), [second.identity_id, identity.identity_id], 'newest first');
  const trailing = await server.request('GET', '/identities/');
  t.equal(trailing.status, 200, 'the id left empty lists all');
  t.equal(trailing.body.length, 2);
  const paged = await server.request('GET', '/identities?limit=1&offset=1');
  t.same(paged.body.map((item: any) => item.identity_id), [identity.identity_id]);

  const filtered = await server.request('POST', '/identities/filter', { filters: [{ field: 'organization_name', operator: 'eq', value: 'Smith Holdings' }] });
  t.same(filtered.body.data, [replaced.body], 'the index holds the replaced identity');

  const balance = await post(server, '/balances', { ledger_id: 'general_ledger_id', currency: 'USD', identity_id: second.identity_id });
  t.equal(balance.identity_id, second.identity_id, 'balances can reference an identity');
  const missingOwner = await server.request('POST', '/balances', { ledger_id: 'general_ledger_id', currency: 'USD', identity_id: 'idt_missing' });
  t.equal(missingOwner.status, 404);
  t.equal(missingOwner.body.error_detail.code, 'IDT_NOT_FOUND');
  const inUse = await server.request('DELETE', `/identities/${second.identity_id}`);
  t.equal(inUse.status, 409, 'an identity a balance names cannot be deleted');
  t.equal(inUse.body.error_detail.code, 'GEN_CONFLICT');

  const deleted = await server.request('DELETE', `/identities/${identity.identity_id}`);
  t.equal(deleted.status, 200);
  t.same(deleted.body, { message: 'Identity deleted successfully' });
  t.equal((await server.request('GET', `/identities/${identity.identity_id}`)).status, 404);
  const gone = await server.request('POST', '/identities/filter', { filters: [], include_count: true });
  t.equal(gone.body.total_count, 1, 'the deleted identity left the index');
  const search = await server.request('POST', '/search/identities', { q: 'Smith' }, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) });
  t.equal(search.body.found, 0, 'and the full-text index');
});

t.test('identity refusals', async (t) => {
  const server = await startScopedServer(t);
  const cases: Array<[string, string, unknown, number, string]> = [
    ['POST', '/identities', { first_name: 'No type' }, 400, 'IDT_VALIDATION_ERROR'],
    ['POST', '/identities', { identity_type: 'robot' }, 400, 'IDT_VALIDATION_ERROR'],
    ['POST', '/identities', { identity_type: 'individual', dob: '1985-13-45' }, 400, 'IDT_VALIDATION_ERROR'],
    ['POST', '/identities', { identity_type: 'individual', first_name: 'x'.repeat(300) }, 400, 'IDT_VALIDATION_ERROR'],
    ['POST', '/identities', { identity_type: 'individual', meta_data: 'flat' }, 400, 'IDT_VALIDATION_ERROR'],
    ['GET', '/identities/idt_missing', undefined, 404, 'IDT_NOT_FOUND'],
    ['PUT', '/identities/idt_missing', { identity_type: 'individual' }, 404, 'IDT_NOT_FOUND'],
    // An unknown identity is looked up first, as in Blnk: 404 whatever the body.
    ['PUT', '/identities/idt_missing', { first_name: 'x' }, 404, 'IDT_NOT_FOUND'],
    ['DELETE', '/identities/idt_missing', undefined, 404, 'IDT_NOT_FOUND'],
  ];
  for (const [method, route, body, status, code] of cases) {
    const response = await server.request(method, route, body);
    t.equal(response.status, status, `${method} ${route} ${JSON.stringify(body)}`);
    t.equal(response.body.error_detail.code, code);
  }
  const validation = await server.request('POST', '/identities', { first_name: 'No type' });
  t.ok(validation.body.error_detail.details.identity_type, 'the details name identity_type');
  const existing = await server.request('POST', '/identities', { identity_type: 'individual' });
  const badReplacement = await server.request('PUT', `/identities/${existing.body.identity_id}`, { first_name: 'x' });
  t.equal(badReplacement.status, 400, 'a known identity with a bad body');
  t.equal(badReplacement.body.error_detail.code, 'IDT_VALIDATION_ERROR');
  t.ok(badReplacement.body.error_detail.details.identity_type);
});

t.test('an identity under an id the caller chose: kept, shape-checked as Blnk does, a used one a 409', async (t) => {
  const server = await startScopedServer(t);
  const chosen = 'idt_11111111-1111-4111-8111-111111111111';
  const created = await server.request('POST', '/identities', { identity_id: chosen, identity_type: 'individual', first_name: 'Alice' });
  t.equal(created.status, 201, created.text);
  t.equal(created.body.identity_id, chosen, 'the id is kept as given');
  t.equal((await server.request('GET', `/identities/${chosen}`)).body.first_name, 'Alice');

  // A retry of the same create (or any create under that id) is a conflict, and the first stands.
  const again = await server.request('POST', '/identities', { identity_id: chosen, identity_type: 'individual', first_name: 'Mallory' });
  t.equal(again.status, 409);
  t.equal(again.body.error_detail.code, 'GEN_CONFLICT');
  t.match(again.body.error_detail.message, `Identity already exists: ${chosen}`);
  t.equal((await server.request('GET', `/identities/${chosen}`)).body.first_name, 'Alice', 'the conflict changed nothing');

  // Every form Go's uuid.Parse takes (Blnk's check), kept as written.
  for (const suffix of ['8c5a8e2f3f1d5a9b9c3e4d8f1e5a7b2c', 'URN:uuid:8c5a8e2f-3f1d-5a9b-9c3e-4d8f1e5a7b2d', '{8c5a8e2f-3f1d-5a9b-9c3e-4d8f1e5a7b2e}', 'ABCDEF01-3F1D-5A9B-9C3E-4D8F1E5A7B2F']) {
    const answer = await server.request('POST', '/identities', { identity_id: `idt_${suffix}`, identity_type: 'organization' });
    t.equal(answer.status, 201, `idt_${suffix}`);
    t.equal(answer.body.identity_id, `idt_${suffix}`);
  }
  // An empty id asks for a generated one, as a missing one does.
  t.match((await server.request('POST', '/identities', { identity_id: '', identity_type: 'individual' })).body.identity_id, /^idt_/);

  // Blnk's refusals (database/identity_test.go CallerSuppliedID_BadPrefix / BadUUID), 400 IDT_VALIDATION_ERROR naming the field.
  const bad: Array<[unknown, string]> = [
    ['user_123', "identity_id must start with the 'idt_' prefix"],
    ['IDT_8c5a8e2f-3f1d-5a9b-9c3e-4d8f1e5a7b2c', "identity_id must start with the 'idt_' prefix"],
    ['idt_', "identity_id suffix after 'idt_' must be a valid UUID"],
    ['idt_not-a-uuid', "identity_id suffix after 'idt_' must be a valid UUID"],
    ['idt_8c5a8e2f-3f1d-5a9b-9c3e-4d8f1e5a7b2', "identity_id suffix after 'idt_' must be a valid UUID"],
    ['idt_8c5a8e2f-3f1d-5a9b-9c3e-4d8f1e5a7b2cZZ', "identity_id suffix after 'idt_' must be a valid UUID"],
    ['idt_xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx', "identity_id suffix after 'idt_' must be a valid UUID"],
    ['idt_(8c5a8e2f-3f1d-5a9b-9c3e-4d8f1e5a7b2c)', "identity_id suffix after 'idt_' must be a valid UUID"],
    ['idt_8c5a8e2f-3f1d-5a9b-9c3e-4d8f1e5a7b2c/../x', "identity_id suffix after 'idt_' must be a valid UUID"],
    [`idt_${'a'.repeat(5000)}`, "identity_id suffix after 'idt_' must be a valid UUID"],
    [42, 'expected string'],
  ];
  for (const [identityId, message] of bad) {
    const answer = await server.request('POST', '/identities', { identity_id: identityId, identity_type: 'individual' });
    t.equal(answer.status, 400, `${String(identityId).slice(0, 60)}: 400`);
    t.equal(answer.body.error_detail.code, 'IDT_VALIDATION_ERROR');
    t.match(answer.body.error_detail.details.identity_id, message, 'the details say what is wrong with identity_id');
  }
  const listed = await server.request('GET', '/identities');
  t.equal(listed.body.length, 6, 'no refused request created anything');
});

t.test('metadata merges into every kind of record', async (t) => {
  const server = await startScopedServer(t);
  const ledger = await post(server, '/ledgers', { name: 'books', meta_data: { keep: 1 } });
  const identity = await post(server, '/identities', { identity_type: 'individual', meta_data: { keep: 1 } });
  const balance = await post(server, '/balances', { ledger_id: ledger.ledger_id, currency: 'USD', meta_data: { keep: 1 } });
  const transaction = await post(server, '/transactions', {
    description: 'test', currency: 'USD', precise_amount: 5, source: '@world', destination: balance.balance_id, allow_overdraft: true, skip_queue: true, meta_data: { keep: 1, replace: 'old' },
  });
  const targets: Array<[string, string, string]> = [
    [ledger.ledger_id, `/ledgers/${ledger.ledger_id}`, 'ledgers'],
    [identity.identity_id, `/identities/${identity.identity_id}`, 'identities'],
    [balance.balance_id, `/balances/${balance.balance_id}`, 'balances'],
    [transaction.transaction_id, `/transactions/${transaction.transaction_id}`, 'transactions'],
    ['general_ledger_id', '/ledgers/general_ledger_id', 'ledgers'],
  ];
  for (const [id, route, collection] of targets) {
    const updated = await server.request('POST', `/${id}/metadata`, { meta_data: { replace: 'new', added: { deep: [1, 2] }, big: 123456789012345678901234567890n } });
    t.equal(updated.status, 201, `${id} metadata updated`);
    t.match(updated.body.meta_data, { replace: 'new', added: { deep: [1, 2] } });
    t.match(updated.text, /"big":123456789012345678901234567890/, 'big integers in metadata stay exact');
    const read = await server.request('GET', route);
    t.same(read.body.meta_data, updated.body.meta_data, `${route} shows the merged metadata`);
    if (collection !== 'ledgers' || id !== 'general_ledger_id') t.equal(read.body.meta_data.keep, 1, 'existing keys are kept');
    const filtered = await server.request('POST', `/${collection}/filter`, { filters: [{ field: 'meta_data.replace', operator: 'eq', value: 'new' }] });
    const idField = collection === 'ledgers' ? 'ledger_id' : collection === 'identities' ? 'identity_id' : collection === 'balances' ? 'balance_id' : 'transaction_id';
    t.ok(filtered.body.data.some((record: any) => record[idField] === id), `${collection} filter sees the new metadata`);
    const fromIndex = filtered.body.data.find((record: any) => record[idField] === id);
    t.match(toJsonText(fromIndex?.meta_data ?? {}), /"added"/);
    t.equal(toJsonText(fromIndex.meta_data), toJsonText(read.body.meta_data), 'the index returns the metadata byte for byte');
  }
  const after = await server.request('GET', `/transactions/${transaction.transaction_id}`);
  t.equal(after.body.status, transaction.status, 'the transaction is otherwise unchanged');
  t.equal(after.body.hash, transaction.hash);
  const searched = await server.request('POST', '/search/transactions', { q: 'new' }, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) });
  t.equal(searched.body.found, 1, 'search sees the new metadata');
});

t.test('metadata refusals and routes it must not shadow', async (t) => {
  const server = await startScopedServer(t);
  const cases: Array<[string, unknown, number, string]> = [
    ['/txn_missing/metadata', { meta_data: { a: 1 } }, 404, 'META_ENTITY_NOT_FOUND'],
    ['/bln_missing/metadata', { meta_data: { a: 1 } }, 404, 'META_ENTITY_NOT_FOUND'],
    ['/ldg_missing/metadata', { meta_data: { a: 1 } }, 404, 'META_ENTITY_NOT_FOUND'],
    ['/idt_missing/metadata', { meta_data: { a: 1 } }, 404, 'META_ENTITY_NOT_FOUND'],
    ['/hook_123/metadata', { meta_data: { a: 1 } }, 400, 'META_UNSUPPORTED_ENTITY'],
    ['/whatever/metadata', { meta_data: { a: 1 } }, 400, 'META_UNSUPPORTED_ENTITY'],
    ['/general_ledger_id/metadata', { meta_data: 'nope' }, 400, 'GEN_VALIDATION_ERROR'],
    ['/general_ledger_id/metadata', {}, 400, 'GEN_VALIDATION_ERROR'],
  ];
  for (const [route, body, status, code] of cases) {
    const response = await server.request('POST', route, body);
    t.equal(response.status, status, route);
    t.equal(response.body.error_detail.code, code, route);
  }
  // Fixed routes with two segments still reach their own handlers.
  const bulk = await server.request('POST', '/transactions/bulk', { transactions: [], atomic: false });
  t.not(bulk.body?.error_detail?.code, 'META_UNSUPPORTED_ENTITY', 'POST /transactions/bulk is not a metadata update');
  const filter = await server.request('POST', '/ledgers/filter', { filters: [] });
  t.equal(filter.status, 200);
  const search = await server.request('POST', '/search/ledgers', { q: '*' });
  t.equal(search.status, 200);
  const get = await server.request('GET', '/general_ledger_id/metadata');
  t.equal(get.status, 405, 'only POST updates metadata');
});

t.test('balance history equals the fold of the log at every moment', async (t) => {
  const server = await startScopedServer(t);
  const balance = await post(server, '/balances', { ledger_id: 'general_ledger_id', currency: 'USD' });
  const moments: number[] = [];
  for (let index = 0; index < 12; index += 1) {
    await new Promise((resolve) => setTimeout(resolve, 3));
    const body = index % 4 === 3
      ? { source: balance.balance_id, destination: '@world', precise_amount: 7, inflight: true }
      : { source: '@world', destination: balance.balance_id, precise_amount: 100 + index };
    await post(server, '/transactions', { description: 'test', currency: 'USD', allow_overdraft: true, skip_queue: true, ...body });
    if (index === 5) await post(server, `/${balance.balance_id}/metadata`, { meta_data: { note: 'midway' } });
    moments.push(Date.now());
  }
  const events: LedgerEvent[] = [...server.runtime.log.read(1)].map((logged) => logged.event);
  for (const moment of moments) {
    const at = new Date(moment).toISOString();
    const response = await server.request('GET', `/balances/${balance.balance_id}/at?timestamp=${encodeURIComponent(at)}`);
    t.equal(response.status, 200, at);
    const expected = foldBalance(balance.balance_id, events, moment);
    t.equal(toJsonText(response.body.balance), toJsonText(balanceView(expected as never)), `at ${at} the balance from the index equals the fold`);
    t.equal(Date.parse(response.body.timestamp), moment, 'the moment asked about');
    t.equal(response.body.from_source, false, 'answered from the index');
    const folded = await server.request('GET', `/balances/${balance.balance_id}/at?timestamp=${encodeURIComponent(at)}&from_source=true`);
    t.equal(toJsonText(folded.body.balance), toJsonText(response.body.balance), `at ${at} from_source=true folds the log to the same balance`);
    t.equal(folded.body.from_source, true);
  }
  const now = await server.request('GET', `/balances/${balance.balance_id}/at`);
  const live = await server.request('GET', `/balances/${balance.balance_id}`);
  t.same(now.body.balance, live.body, 'without a timestamp: the balance now');
  const offset = await server.request('GET', `/balances/${balance.balance_id}/at?timestamp=${encodeURIComponent(new Date(moments[3] as number).toISOString().replace('Z', '+00:00'))}`);
  t.equal(offset.status, 200, 'offsets are accepted');

  const before = await server.request('GET', `/balances/${balance.balance_id}/at?timestamp=2000-01-01T00:00:00Z`);
  t.equal(before.status, 404, 'before its creation the balance did not exist');
  t.equal(before.body.error_detail.code, 'BAL_NOT_FOUND');
  for (const bad of ['yesterday', '2026-02-30T00:00:00Z', '12345']) {
    const response = await server.request('GET', `/balances/${balance.balance_id}/at?timestamp=${bad}`);
    t.equal(response.status, 400, bad);
    t.equal(response.body.error_detail.code, 'BAL_INVALID_TIMESTAMP');
  }
  const unknown = await server.request('GET', '/balances/bln_missing/at?timestamp=2026-01-01T00:00:00Z');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error_detail.code, 'BAL_NOT_FOUND');
});
