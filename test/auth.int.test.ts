// Authentication and API keys through the real server: every AUTH_* code, the accepted headers, auth
// off without a secret key, escalation, expiry, revocation, what listings show, and batched last use.

import fs from 'node:fs';
import t from 'tap';
import { accessServerFor, createKey, MASTER_KEY } from './helpers/access-server.js';
import { sendRequest } from './helpers/test-server.js';

const inADay = (): string => new Date(Date.now() + 24 * 3600_000).toISOString();
/** Sooner than the default expiry of keys made by createKey, so keys those make may use it. */
const inAnHour = (): string => new Date(Date.now() + 3600_000).toISOString();

t.test('without a secret key authentication is off', async (t) => {
  const server = await accessServerFor(t, { secretKey: '' });
  const ledgers = await server.as(undefined, 'GET', '/ledgers');
  t.equal(ledgers.status, 200);
  const hooks = await server.as(undefined, 'GET', '/hooks');
  t.equal(hooks.status, 200, 'hooks answer too: every caller acts as the master key');
  const created = await server.as(undefined, 'POST', '/api-keys', { name: 'k', owner: 'o', scopes: ['*:*'], expires_at: inADay() });
  t.equal(created.status, 201);
});

t.test('health needs no key; everything else does', async (t) => {
  const server = await accessServerFor(t);
  t.equal((await server.as(undefined, 'GET', '/health')).status, 200);
  t.equal((await server.as('wrong', 'GET', '/health')).status, 200, 'a bad key does not matter on /health');
  for (const [method, route] of [['GET', '/ledgers'], ['POST', '/transactions'], ['GET', '/metrics'], ['GET', '/hooks'], ['GET', '/no-such-route']]) {
    const response = await server.as(undefined, method as string, route as string, method === 'POST' ? {} : undefined);
    t.equal(response.status, 401, `${method} ${route}`);
    t.equal(response.body.error_detail.code, 'AUTH_MISSING_API_KEY');
  }
  const empty = await server.as('', 'GET', '/ledgers');
  t.equal(empty.body.error_detail.code, 'AUTH_MISSING_API_KEY', 'an empty header is no key');
});

t.test('the key is read from X-svc-key in any case, X-Blnk-Key, or Authorization: Bearer', async (t) => {
  const server = await accessServerFor(t);
  const { key } = await createKey(server, ['ledgers:read']);
  for (const secret of [MASTER_KEY, key]) {
    const variants: Array<Record<string, string>> = [
      { 'X-svc-key': secret }, { 'x-svc-key': secret }, { 'X-SVC-KEY': secret }, { 'X-Svc-Key': secret },
      { 'X-Blnk-Key': secret }, { 'x-blnk-key': secret },
      { Authorization: `Bearer ${secret}` }, { authorization: `bearer ${secret}` },
    ];
    for (const headers of variants) {
      const response = await sendRequest(server.url, 'GET', '/ledgers', undefined, headers);
      t.equal(response.status, 200, JSON.stringify(Object.keys(headers)));
    }
  }
  const basic = await sendRequest(server.url, 'GET', '/ledgers', undefined, { Authorization: `Basic ${MASTER_KEY}` });
  t.equal(basic.body.error_detail.code, 'AUTH_MISSING_API_KEY', 'only the Bearer scheme carries a key');
});

t.test('unknown, malformed, tampered and revoked keys are AUTH_INVALID_API_KEY', async (t) => {
  const server = await accessServerFor(t);
  const { id, key } = await createKey(server, ['ledgers:read']);
  const [keyId, secret] = [key.slice(0, key.lastIndexOf('.')), key.slice(key.lastIndexOf('.') + 1)];
  t.equal(keyId, id, 'the key names its record');
  const flipped = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
  for (const candidate of [
    'nonsense', `${MASTER_KEY}x`, MASTER_KEY.slice(0, -1), `${keyId}.${flipped}`, `key_unknown.${secret}`,
    `${keyId}.`, `.${secret}`, 'x'.repeat(5000),
  ]) {
    const response = await server.as(candidate, 'GET', '/ledgers');
    t.equal(response.status, 401, candidate.slice(0, 40));
    t.equal(response.body.error_detail.code, 'AUTH_INVALID_API_KEY');
  }
  t.equal((await server.as(key, 'GET', '/ledgers')).status, 200, 'the real key works');
  const revoked = await server.master('DELETE', `/api-keys/${id}`);
  t.equal(revoked.status, 204);
  const after = await server.as(key, 'GET', '/ledgers');
  t.equal(after.status, 401);
  t.equal(after.body.error_detail.code, 'AUTH_INVALID_API_KEY', 'a revoked key stops working at once');
  const listed = await server.master('GET', '/api-keys?owner=owner-1');
  t.equal(listed.body[0].is_revoked, true, 'a revoked key stays listed, marked revoked');
  t.equal((await server.master('DELETE', '/api-keys/key_nope')).body.error_detail.code, 'APIKEY_NOT_FOUND');
});

t.test('an expired key is AUTH_EXPIRED_API_KEY', async (t) => {
  const server = await accessServerFor(t);
  const { key } = await createKey(server, ['ledgers:read'], { expires_at: new Date(Date.now() + 60_000).toISOString() });
  t.equal((await server.as(key, 'GET', '/ledgers')).status, 200);
  server.advanceClock(61_000);
  const expired = await server.as(key, 'GET', '/ledgers');
  t.equal(expired.status, 401);
  t.equal(expired.body.error_detail.code, 'AUTH_EXPIRED_API_KEY');
  t.equal((await server.master('GET', '/ledgers')).status, 200, 'the master key does not expire');
});

t.test('creating keys: required fields, validation, the key shown once', async (t) => {
  const server = await accessServerFor(t);
  const noOwner = await server.master('POST', '/api-keys', { name: 'k', scopes: ['ledgers:read'], expires_at: inADay() });
  t.equal(noOwner.status, 400);
  t.equal(noOwner.body.error_detail.code, 'APIKEY_OWNER_REQUIRED');
  const blankOwner = await server.master('POST', '/api-keys', { name: 'k', owner: ' ', scopes: ['ledgers:read'], expires_at: inADay() });
  t.equal(blankOwner.body.error_detail.code, 'APIKEY_OWNER_REQUIRED');
  for (const [label, body] of [
    ['no name', { owner: 'o', scopes: ['ledgers:read'], expires_at: inADay() }],
    ['no scopes', { name: 'k', owner: 'o', expires_at: inADay() }],
    ['empty scopes', { name: 'k', owner: 'o', scopes: [], expires_at: inADay() }],
    ['unknown resource', { name: 'k', owner: 'o', scopes: ['money:read'], expires_at: inADay() }],
    ['unknown action', { name: 'k', owner: 'o', scopes: ['ledgers:steal'], expires_at: inADay() }],
    ['not resource:action', { name: 'k', owner: 'o', scopes: ['ledgers'], expires_at: inADay() }],
    ['no expiry', { name: 'k', owner: 'o', scopes: ['ledgers:read'] }],
    ['bad expiry', { name: 'k', owner: 'o', scopes: ['ledgers:read'], expires_at: 'tomorrow' }],
    ['past expiry', { name: 'k', owner: 'o', scopes: ['ledgers:read'], expires_at: '2001-01-01T00:00:00Z' }],
  ] as const) {
    const response = await server.master('POST', '/api-keys', body);
    t.equal(response.status, 400, label);
    t.equal(response.body.error_detail.code, 'GEN_VALIDATION_ERROR', label);
  }
  const created = await server.master('POST', '/api-keys', {
    name: 'reporting', owner: 'team-a', scopes: ['ledgers:read', 'balances:*', 'ledgers:read'], expires_at: '2099-01-01T00:00:00Z',
  });
  t.equal(created.status, 201);
  t.match(created.body, {
    name: 'reporting', owner_id: 'team-a', scopes: ['ledgers:read', 'balances:*'], expires_at: '2099-01-01T00:00:00Z',
    last_used_at: '0001-01-01T00:00:00Z', is_revoked: false,
  });
  t.match(created.body.api_key_id, /^key_/);
  t.ok(created.body.key.startsWith(`${created.body.api_key_id}.`), 'the key carries its id');
  t.notOk('secret_hash' in created.body, 'the hash is never shown');
});

t.test('listings never show the key or its hash', async (t) => {
  const server = await accessServerFor(t);
  const first = await createKey(server, ['ledgers:read'], { owner: 'alpha' });
  const second = await createKey(server, ['balances:read'], { owner: 'beta' });
  const all = await server.master('GET', '/api-keys');
  t.equal(all.body.length, 2);
  const alpha = await server.master('GET', '/api-keys?owner=alpha');
  t.same(alpha.body.map((key: { api_key_id: string }) => key.api_key_id), [first.id]);
  for (const text of [all.text, alpha.text]) {
    for (const { key } of [first, second]) {
      t.notOk(text.includes(key.slice(key.lastIndexOf('.') + 1)), 'no secret in a listing');
    }
    t.notOk(text.includes('secret_hash'), 'no hash in a listing');
  }
  for (const record of server.runtime.engine.state.apiKeys.values()) {
    t.notOk(all.text.includes(record.secret_hash), 'no hash value in a listing');
  }
});

t.test('escalation: a key cannot grant or revoke scopes broader than its own', async (t) => {
  const server = await accessServerFor(t);
  const admin = await createKey(server, ['api-keys:*', 'ledgers:read', 'balances:*']);
  const grant = (scopes: string[]) => server.as(admin.key, 'POST', '/api-keys', { name: 'child', owner: 'owner-1', scopes, expires_at: inAnHour() });
  for (const scopes of [['ledgers:read'], ['balances:write'], ['balances:*'], ['api-keys:read', 'balances:delete']]) {
    t.equal((await grant(scopes)).status, 201, `may grant ${scopes.join(' ')}`);
  }
  for (const scopes of [['ledgers:write'], ['ledgers:*'], ['*:read'], ['*:*'], ['transactions:read'], ['ledgers:read', 'hooks:read']]) {
    const response = await grant(scopes);
    t.equal(response.status, 403, `may not grant ${scopes.join(' ')}`);
    t.equal(response.body.error_detail.code, 'AUTH_SCOPE_ESCALATION');
  }
  // As Blnk checks it: before the owner, the other fields and the expiry.
  const first = await server.as(admin.key, 'POST', '/api-keys', { scopes: ['hooks:write'], expires_at: 'never' });
  t.equal(first.status, 403, 'escalation is refused before any other check');
  t.equal(first.body.error_detail.code, 'AUTH_SCOPE_ESCALATION');
  const broad = await createKey(server, ['*:*']);
  const narrowRevoke = await server.as(admin.key, 'DELETE', `/api-keys/${broad.id}`);
  t.equal(narrowRevoke.status, 403, 'a narrower key cannot revoke a broader one');
  t.equal(narrowRevoke.body.error_detail.code, 'AUTH_SCOPE_ESCALATION');
  const peer = await createKey(server, ['ledgers:read']);
  t.equal((await server.as(admin.key, 'DELETE', `/api-keys/${peer.id}`)).status, 204, 'but can revoke one within its scopes');
  const full = await createKey(server, ['*:*']);
  const everything = await server.as(full.key, 'POST', '/api-keys', { name: 'c', owner: 'owner-1', scopes: ['*:*', 'hooks:write'], expires_at: inAnHour() });
  t.equal(everything.status, 201, '*:* may grant anything');
  const noWrite = await createKey(server, ['api-keys:read']);
  const denied = await server.as(noWrite.key, 'POST', '/api-keys', { name: 'c', owner: 'owner-1', scopes: ['api-keys:read'], expires_at: inAnHour() });
  t.equal(denied.body.error_detail.code, 'AUTH_INSUFFICIENT_PERMISSIONS', 'creating keys needs api-keys:write');
});

t.test('a key manages only its own owner\'s keys, within its own lifetime, and the keys it makes die with it', async (t) => {
  const server = await accessServerFor(t);
  const alice = await createKey(server, ['api-keys:*', 'ledgers:read'], { owner: 'alice' });
  const bob = await createKey(server, ['api-keys:*', 'ledgers:read'], { owner: 'bob' });
  const make = (key: string, owner: string, expires_at = inAnHour()) =>
    server.as(key, 'POST', '/api-keys', { name: 'child', owner, scopes: ['ledgers:read'], expires_at });

  const forBob = await make(alice.key, 'bob');
  t.equal(forBob.status, 403, 'no key for another owner');
  t.equal(forBob.body.error_detail.code, 'AUTH_CROSS_OWNER_ACCESS');
  const listAll = await server.as(alice.key, 'GET', '/api-keys');
  t.equal(listAll.status, 200, 'a key naming no owner lists its own owner\'s keys, as Blnk answers (every owner is for the master key)');
  t.ok(listAll.body.length > 0 && listAll.body.every((key: any) => key.owner_id === 'alice'), 'only alice\'s');
  t.equal((await server.as(alice.key, 'GET', '/api-keys?owner=bob')).body.error_detail.code, 'AUTH_CROSS_OWNER_ACCESS');
  const own = await server.as(alice.key, 'GET', '/api-keys?owner=alice');
  t.equal(own.status, 200);
  t.same(own.body.map((key: any) => key.owner_id), ['alice']);
  const revokeBob = await server.as(alice.key, 'DELETE', `/api-keys/${bob.id}`);
  t.equal(revokeBob.body.error_detail.code, 'AUTH_CROSS_OWNER_ACCESS', 'no revoking another owner\'s key');
  t.equal((await server.as(bob.key, 'GET', '/ledgers')).status, 200, 'bob\'s key still works');
  t.equal((await server.master('GET', '/api-keys')).status, 200, 'the master key lists every owner');

  const tooLate = await make(alice.key, 'alice', new Date(Date.now() + 48 * 3600_000).toISOString());
  t.equal(tooLate.status, 400, 'no key that outlives its creator');
  t.equal(tooLate.body.error_detail.code, 'GEN_VALIDATION_ERROR');
  t.ok(tooLate.body.error_detail.details.expires_at, 'names expires_at');

  const child = await make(alice.key, 'alice');
  t.equal(child.status, 201);
  const grandchild = await make(child.body.key, 'alice', new Date(Date.now() + 1800_000).toISOString());
  t.equal(grandchild.status, 403, 'a key without api-keys scopes makes none');
  const middle = await server.as(alice.key, 'POST', '/api-keys', { name: 'middle', owner: 'alice', scopes: ['api-keys:*', 'ledgers:read'], expires_at: inAnHour() });
  const leaf = await make(middle.body.key, 'alice', new Date(Date.now() + 1800_000).toISOString());
  t.equal(leaf.status, 201);
  for (const key of [child.body.key, middle.body.key, leaf.body.key]) t.equal((await server.as(key, 'GET', '/ledgers')).status, 200);
  t.equal((await server.master('DELETE', `/api-keys/${alice.id}`)).status, 204);
  for (const [label, key] of [['alice', alice.key], ['child', child.body.key], ['middle', middle.body.key], ['leaf', leaf.body.key]]) {
    const refused = await server.as(key as string, 'GET', '/ledgers');
    t.equal(refused.body.error_detail?.code, 'AUTH_INVALID_API_KEY', `${label} is revoked with alice's key`);
  }
  t.equal((await server.as(bob.key, 'GET', '/ledgers')).status, 200, 'other owners are untouched');
  const listed = await server.master('GET', '/api-keys?owner=alice');
  t.ok(listed.body.every((key: any) => key.is_revoked), 'the listing shows them all revoked');
});

t.test('hooks need the master key, whatever scopes a key has', async (t) => {
  const server = await accessServerFor(t);
  for (const scopes of [['hooks:*'], ['hooks:read', 'hooks:write', 'hooks:delete'], ['*:*']]) {
    const { key } = await createKey(server, scopes);
    for (const [method, route] of [['GET', '/hooks'], ['POST', '/hooks'], ['GET', '/hooks/hook_x'], ['PUT', '/hooks/hook_x'], ['DELETE', '/hooks/hook_x']]) {
      const response = await server.as(key, method as string, route as string, method === 'POST' || method === 'PUT' ? {} : undefined);
      t.equal(response.status, 403, `${scopes.join(' ')}: ${method} ${route}`);
      t.equal(response.body.error_detail.code, 'AUTH_MASTER_KEY_REQUIRED');
    }
  }
  const { key } = await createKey(server, ['*:*']);
  t.equal((await server.as(key, 'GET', '/metrics')).body.error_detail.code, 'AUTH_MASTER_KEY_REQUIRED', 'metrics too');
  t.equal((await server.master('GET', '/hooks')).status, 200);
});

t.test('last use is noted at once and written in batches', async (t) => {
  const server = await accessServerFor(t, { apiKeyUseFlushMs: 3_600_000 });
  const { id, key } = await createKey(server, ['ledgers:read']);
  const seqBefore = server.runtime.log.appendedSeq;
  for (let index = 0; index < 20; index += 1) t.equal((await server.as(key, 'GET', '/ledgers')).status, 200);
  t.equal(server.runtime.log.appendedSeq, seqBefore, 'authenticated requests write nothing to the log');
  const listed = await server.master('GET', '/api-keys');
  t.not(listed.body[0].last_used_at, '0001-01-01T00:00:00Z', 'listing shows the noted use before it is written');
  server.app.apiKeyUsage.flush();
  t.equal(server.runtime.log.appendedSeq - seqBefore, 1, 'twenty uses became one log event');
  const recorded = server.runtime.engine.state.apiKeys.get(id)?.last_used_at ?? 0;
  t.equal(Date.parse(listed.body[0].last_used_at), recorded, 'the engine holds the noted time');
});

t.test('noted uses are flushed on a timer', async (t) => {
  const server = await accessServerFor(t, { apiKeyUseFlushMs: 50 });
  const { id, key } = await createKey(server, ['ledgers:read']);
  await server.as(key, 'GET', '/ledgers');
  const deadline = Date.now() + 10_000;
  while ((server.runtime.engine.state.apiKeys.get(id)?.last_used_at ?? 0) === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.ok((server.runtime.engine.state.apiKeys.get(id)?.last_used_at ?? 0) > 0);
});

t.test('unknown routes and wrong methods still authenticate first', async (t) => {
  const server = await accessServerFor(t);
  t.equal((await server.master('GET', '/no-such-route')).status, 404);
  const { key } = await createKey(server, ['ledgers:read']);
  t.equal((await server.as(key, 'GET', '/no-such-route')).status, 404);
  t.equal((await server.as(key, 'PATCH', '/ledgers')).status, 405);
});

t.test('the data directory never holds a key or the master key', async (t) => {
  const server = await accessServerFor(t);
  const keys = [await createKey(server, ['*:*']), await createKey(server, ['ledgers:read'])];
  for (const { key } of keys) await server.as(key, 'GET', '/ledgers');
  await server.stop();
  const secrets = [MASTER_KEY, ...keys.map(({ key }) => key.slice(key.lastIndexOf('.') + 1))];
  const wal = fs.readFileSync(`${server.dataDir}/wal/data.mdb`);
  t.not(wal.indexOf(keys[0]?.id as string), -1, 'control: text written to the log is found by this search');
  for (const file of filesUnder(server.dataDir)) {
    const content = fs.readFileSync(file);
    for (const secret of secrets) t.equal(content.indexOf(secret), -1, `${file} does not contain a secret`);
  }
});

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => `${entry.parentPath}/${entry.name}`);
}

t.test('what an API key creates carries meta_data.BLNK_GENERATED_BY, as in Blnk; the master key marks nothing', async (t) => {
  const server = await accessServerFor(t);
  const { id, key } = await createKey(server, ['ledgers:*', 'balances:*', 'transactions:*', 'identities:*']);
  const ledger = await server.as(key, 'POST', '/ledgers', { name: 'marked', meta_data: { team: 'ops' } });
  t.same(ledger.body.meta_data, { team: 'ops', BLNK_GENERATED_BY: id }, 'a ledger keeps its metadata and gains the key id');
  const balance = await server.as(key, 'POST', '/balances', { ledger_id: ledger.body.ledger_id, currency: 'USD' });
  t.equal(balance.body.meta_data.BLNK_GENERATED_BY, id, 'a balance without metadata gets it');
  const identity = await server.as(key, 'POST', '/identities', { identity_type: 'individual', first_name: 'Ada', meta_data: null });
  t.equal(identity.body.meta_data.BLNK_GENERATED_BY, id, 'an identity with null metadata too');
  const transfer = await server.as(key, 'POST', '/transactions', {
    description: 'marked', precise_amount: 5, currency: 'USD', source: '@marked-world', destination: balance.body.balance_id, allow_overdraft: true, skip_queue: true,
  });
  t.equal(transfer.body.meta_data.BLNK_GENERATED_BY, id, 'a transaction too');
  const bulk = await server.as(key, 'POST', '/transactions/bulk', {
    skip_queue: true, transactions: [{ description: 'item', precise_amount: 1, currency: 'USD', source: '@marked-world', destination: balance.body.balance_id, allow_overdraft: true, reference: 'marked-bulk-1' }],
  });
  t.equal(bulk.status, 201, bulk.text);
  const item = await server.master('GET', '/transactions/reference/marked-bulk-1');
  t.equal(item.body.meta_data.BLNK_GENERATED_BY, undefined, 'bulk items are not marked, as in Blnk');
  const byMaster = await server.master('POST', '/ledgers', { name: 'unmarked' });
  t.same(byMaster.body.meta_data, {}, 'the master key marks nothing');
  const filtered = await server.as(key, 'POST', '/ledgers/filter', { filters: [] });
  t.equal(filtered.status, 200, 'a read that is a POST is left alone');
  const badMeta = await server.as(key, 'POST', '/ledgers', { name: 'x', meta_data: 'not an object' });
  t.equal(badMeta.status, 400, 'metadata that is not an object is still refused');
});
