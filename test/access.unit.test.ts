// The pieces of access control on their own: scope parsing and coverage, key text and secret checks,
// which header carries the key, and the access table's answer for routes of every resource (including
// routes registered on other branches: filter, search, metadata, identities, reconciliation, admin).

import t from 'tap';
import { ApiError } from '../http/api-error.js';
import { apiKeyText, MasterKey, newApiKeySecret, parseApiKeyText, secretMatches, sha256Hex } from '../http/access/api-key-secret.js';
import { authorize, presentedKey, type Principal } from '../http/access/auth.js';
import { routeAccess, ROUTE_ACCESS_TABLE } from '../http/access/route-scopes.js';
import { covers, firstUncovered, parseScope, type Scope } from '../http/access/scopes.js';

t.test('scopes parse as resource:action with wildcards', async (t) => {
  t.same(parseScope('ledgers:read'), { resource: 'ledgers', action: 'read' });
  t.same(parseScope('*:*'), { resource: '*', action: '*' });
  t.same(parseScope('api-keys:delete'), { resource: 'api-keys', action: 'delete' });
  for (const bad of ['', 'ledgers', 'ledgers:', ':read', 'ledgers:read:x', 'Ledgers:read', 'ledgers:READ', 'money:read', 'ledgers:update']) {
    t.equal(parseScope(bad), undefined, JSON.stringify(bad));
  }
});

t.test('coverage', async (t) => {
  const scope = (text: string): Scope => parseScope(text) as Scope;
  t.ok(covers(scope('*:*'), scope('ledgers:read')));
  t.ok(covers(scope('ledgers:*'), scope('ledgers:delete')));
  t.ok(covers(scope('*:read'), scope('search:read')));
  t.notOk(covers(scope('ledgers:*'), scope('balances:read')));
  t.notOk(covers(scope('*:read'), scope('ledgers:write')));
  t.notOk(covers(scope('ledgers:read'), scope('ledgers:*')), 'a wildcard is wider than any one action');
  t.notOk(covers(scope('ledgers:*'), scope('*:*')));
  t.equal(firstUncovered([scope('ledgers:*')], ['ledgers:read', 'ledgers:write']), undefined);
  t.equal(firstUncovered([scope('ledgers:*')], ['ledgers:read', 'balances:read']), 'balances:read');
  t.equal(firstUncovered([scope('*:*')], ['nonsense']), 'nonsense', 'an unparseable scope is never covered');
});

t.test('key text carries the id; only the secret hash is kept; comparisons are exact', async (t) => {
  const { secret, secretHash } = newApiKeySecret();
  t.equal(secretHash, sha256Hex(secret));
  t.match(secret, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  t.not(newApiKeySecret().secret, secret, 'secrets differ');
  const text = apiKeyText('key_0190-abc', secret);
  t.same(parseApiKeyText(text), { apiKeyId: 'key_0190-abc', secret });
  t.equal(parseApiKeyText('no-dot'), undefined);
  t.equal(parseApiKeyText('.x'), undefined);
  t.equal(parseApiKeyText('x.'), undefined);
  t.ok(secretMatches(secret, secretHash));
  t.notOk(secretMatches(secret + 'x', secretHash));
  t.notOk(secretMatches(secret, 'not-hex'));
  const master = new MasterKey('the master');
  t.ok(master.matches('the master'));
  t.notOk(master.matches('the maste'));
  t.notOk(master.matches(''));
});

t.test('the key comes from X-svc-key, X-Blnk-Key or Authorization: Bearer', async (t) => {
  t.equal(presentedKey({ 'x-svc-key': 'a' }), 'a');
  t.equal(presentedKey({ 'x-blnk-key': 'b' }), 'b');
  t.equal(presentedKey({ authorization: 'Bearer c' }), 'c');
  t.equal(presentedKey({ authorization: 'BEARER   c  ' }), 'c');
  t.equal(presentedKey({ 'x-svc-key': 'a', authorization: 'Bearer c' }), 'a', 'X-svc-key first');
  t.equal(presentedKey({ authorization: 'Basic c' }), undefined);
  t.equal(presentedKey({ 'x-svc-key': '  ' }), undefined);
  t.equal(presentedKey({ 'x-svc-key': '', 'x-blnk-key': 'b' }), 'b', 'a blank header gives way to the next');
  t.equal(presentedKey({}), undefined);
});

t.test('the access table over routes of every resource', async (t) => {
  const keyWith = (...scopes: string[]): Principal => ({ kind: 'api_key', apiKeyId: 'key_x', scopes: scopes.map((text) => parseScope(text) as Scope) });
  const codeOf = (principal: Principal, method: string, path: string, params: Record<string, string> = {}): string => {
    try {
      authorize(principal, routeAccess(method, path), params);
      return 'ok';
    } catch (error) {
      return (error as ApiError).code;
    }
  };
  const expectations: Array<[string, string, string, Record<string, string>?]> = [
    ['POST', '/ledgers/filter', 'ledgers:read'],
    ['POST', '/balances/filter', 'balances:read'],
    ['POST', '/transactions/filter', 'transactions:read'],
    ['POST', '/identities/filter', 'identities:read'],
    ['POST', '/:collection/filter', 'identities:read', { collection: 'identities' }],
    ['POST', '/search/:collection', 'search:read', { collection: 'transactions' }],
    ['POST', '/:id/metadata', 'metadata:write', { id: 'txn_1' }],
    ['POST', '/refund-transaction/:id', 'transactions:write'],
    ['PUT', '/transactions/inflight/:id', 'transactions:write'],
    ['POST', '/identities', 'identities:write'],
    ['GET', '/identities/:id', 'identities:read'],
    ['PUT', '/identities/:id', 'identities:write'],
    ['DELETE', '/identities/:id', 'identities:delete'],
    ['DELETE', '/reconciliation/matching-rules/:id', 'reconciliation:delete'],
    ['POST', '/reconciliation/start-instant', 'reconciliation:write'],
    ['GET', '/balances/:id/at', 'balances:read'],
    ['GET', '/balances/:id/history', 'balances:read'],
  ];
  for (const [method, path, scope, params] of expectations) {
    const [resource] = scope.split(':') as [string];
    t.equal(codeOf(keyWith(scope), method, path, params), 'ok', `${scope} may ${method} ${path}`);
    t.equal(codeOf(keyWith(`${resource}:*`), method, path, params), 'ok');
    const other = resource === 'ledgers' ? 'balances' : 'ledgers';
    t.equal(codeOf(keyWith(`${other}:*`), method, path, params), 'AUTH_INSUFFICIENT_PERMISSIONS', `${other}:* may not ${method} ${path}`);
  }
  t.equal(codeOf(keyWith('*:*'), 'POST', '/:collection/filter', { collection: 'nonsense' }), 'AUTH_INSUFFICIENT_PERMISSIONS',
    'a collection that is not a resource is refused to keys');
  for (const [method, path] of [['POST', '/admin/snapshots'], ['POST', '/search/reindex'], ['GET', '/metrics'], ['PUT', '/hooks/:id']]) {
    t.equal(codeOf(keyWith('*:*'), method as string, path as string), 'AUTH_MASTER_KEY_REQUIRED', `${method} ${path}`);
    t.equal(codeOf({ kind: 'master' }, method as string, path as string), 'ok');
  }
  t.equal(codeOf(keyWith('*:*'), 'GET', '/not/in/the/table'), 'AUTH_MASTER_KEY_REQUIRED', 'a route missing from the table is master-only');
  t.equal(routeAccess('HEAD', '/ledgers').kind, 'scope', 'HEAD is read like GET');
  t.ok(Object.keys(ROUTE_ACCESS_TABLE).length > 40);
});
