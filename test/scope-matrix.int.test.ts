// The scope matrix through the real server: for each resource and action with a route, keys whose
// scopes cover it get past authorization (any answer but 401/403), and keys with the other actions of
// that resource, or the same action on another resource, get 403 AUTH_INSUFFICIENT_PERMISSIONS.

import t from 'tap';
import { accessServerFor, createKey, type AccessServer } from './helpers/access-server.js';

interface Case {
  resource: string;
  action: 'read' | 'write' | 'delete';
  method: string;
  route: string;
  body?: unknown;
}

const CASES: Case[] = [
  { resource: 'ledgers', action: 'read', method: 'GET', route: '/ledgers' },
  { resource: 'ledgers', action: 'read', method: 'GET', route: '/ledgers/general_ledger_id' },
  { resource: 'ledgers', action: 'write', method: 'POST', route: '/ledgers', body: { name: 'matrix' } },
  { resource: 'ledgers', action: 'write', method: 'PUT', route: '/ledgers/general_ledger_id', body: { name: 'renamed' } },
  { resource: 'balances', action: 'read', method: 'GET', route: '/balances' },
  { resource: 'balances', action: 'read', method: 'GET', route: '/balances/bln_missing' },
  { resource: 'balances', action: 'read', method: 'GET', route: '/balances/indicator/@nobody/currency/USD' },
  { resource: 'balances', action: 'write', method: 'POST', route: '/balances', body: { ledger_id: 'general_ledger_id', currency: 'USD' } },
  { resource: 'transactions', action: 'read', method: 'GET', route: '/transactions' },
  { resource: 'transactions', action: 'read', method: 'GET', route: '/transactions/txn_missing' },
  { resource: 'transactions', action: 'read', method: 'GET', route: '/transactions/reference/nothing' },
  {
    resource: 'transactions', action: 'write', method: 'POST', route: '/transactions',
    body: { description: 'test', amount: 1, precision: 100, currency: 'USD', source: '@matrix-a', destination: '@matrix-b', allow_overdraft: true, skip_queue: true },
  },
  { resource: 'transactions', action: 'write', method: 'POST', route: '/transactions/bulk', body: { transactions: [] } },
  { resource: 'transactions', action: 'write', method: 'PUT', route: '/transactions/inflight/txn_missing', body: { status: 'commit' } },
  { resource: 'transactions', action: 'write', method: 'POST', route: '/transactions/inflight/bulk/void', body: { transaction_ids: [] } },
  { resource: 'transactions', action: 'write', method: 'POST', route: '/refund-transaction/txn_missing' },
  { resource: 'api-keys', action: 'read', method: 'GET', route: '/api-keys' },
  { resource: 'api-keys', action: 'delete', method: 'DELETE', route: '/api-keys/key_missing' },
];

const RESOURCES = ['ledgers', 'balances', 'transactions', 'identities', 'hooks', 'api-keys', 'search', 'reconciliation', 'metadata'];
const ACTIONS = ['read', 'write', 'delete'] as const;

t.test('each resource x action: covering scopes pass, others are refused', async (t) => {
  const server = await accessServerFor(t);
  const keys = new Map<string, string>();
  const keyFor = async (scope: string): Promise<string> => {
    let key = keys.get(scope);
    if (!key) {
      key = (await createKey(server, [scope])).key;
      keys.set(scope, key);
    }
    return key;
  };
  for (const item of CASES) {
    const label = `${item.method} ${item.route}`;
    const allowed = [`${item.resource}:${item.action}`, `${item.resource}:*`, `*:${item.action}`, '*:*'];
    for (const scope of allowed) {
      const response = await send(server, await keyFor(scope), item);
      t.notOk([401, 403].includes(response.status), `${scope} may ${label} (got ${response.status} ${response.body?.error_detail?.code ?? ''})`);
    }
    const otherActions = ACTIONS.filter((action) => action !== item.action).map((action) => `${item.resource}:${action}`);
    const otherResources = RESOURCES.filter((resource) => resource !== item.resource)
      .flatMap((resource) => [`${resource}:${item.action}`, `${resource}:*`]);
    for (const scope of [...otherActions, ...otherResources]) {
      const response = await send(server, await keyFor(scope), item);
      t.equal(response.status, 403, `${scope} may not ${label}`);
      t.equal(response.body.error_detail.code, 'AUTH_INSUFFICIENT_PERMISSIONS', `${scope} ${label}`);
    }
  }
});

t.test('writing an API key is api-keys:write, and the grant is checked after', async (t) => {
  const server = await accessServerFor(t);
  const body = { name: 'n', owner: 'owner-1', scopes: ['api-keys:write'], expires_at: new Date(Date.now() + 3600_000).toISOString() };
  for (const scope of ['api-keys:write', 'api-keys:*', '*:write', '*:*']) {
    const { key } = await createKey(server, [scope]);
    t.equal((await server.as(key, 'POST', '/api-keys', body)).status, 201, scope);
  }
  for (const scope of ['api-keys:read', 'api-keys:delete', 'ledgers:write', 'hooks:*']) {
    const { key } = await createKey(server, [scope]);
    const response = await server.as(key, 'POST', '/api-keys', body);
    t.equal(response.body.error_detail.code, 'AUTH_INSUFFICIENT_PERMISSIONS', scope);
  }
});

function send(server: AccessServer, key: string, item: Case) {
  return server.as(key, item.method, item.route, item.body);
}
