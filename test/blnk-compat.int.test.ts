// The Blnk compatibility suite: replays the cases of test/helpers/blnk-cases.ts (Blnk's documented
// requests and the answers its own tests expect) against a real server, after a set-up that gives the
// cases their ids. One subtest per case, named with where the expectation comes from.

import t from 'tap';
import { BLNK_CASES, type BlnkCase } from './helpers/blnk-cases.js';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

type Names = Record<string, string>;

async function created(server: TestServer, path: string, body: unknown): Promise<any> {
  const answer = await server.request('POST', path, body);
  if (answer.status !== 201) throw new Error(`set-up ${path}: ${answer.status} ${answer.text}`);
  return answer.body;
}

async function setUp(server: TestServer): Promise<Names> {
  const ledger = (await created(server, '/ledgers', { name: 'Compat ledger' })).ledger_id;
  const identity = (await created(server, '/identities', { identity_type: 'individual', first_name: 'Compat', last_name: 'Case', category: 'test' })).identity_id;
  const balance = (await created(server, '/balances', { ledger_id: ledger, currency: 'USD', identity_id: identity })).balance_id;
  const other = (await created(server, '/balances', { ledger_id: ledger, currency: 'USD' })).balance_id;
  const txn = await created(server, '/transactions', { description: 'test', precise_amount: 10_000, currency: 'USD', source: '@world', destination: balance, reference: 'compat-ref-1', allow_overdraft: true, skip_queue: true });
  const hold = await created(server, '/transactions', { description: 'test', precise_amount: 100, currency: 'USD', source: balance, destination: other, reference: 'compat-hold-1', inflight: true, skip_queue: true });
  const rule = (await created(server, '/reconciliation/matching-rules', { name: 'partial reference', criteria: [{ field: 'reference', operator: 'contains' }] })).rule_id;
  // Blnk's lineage docs (transactions/lineage): a $100 stripe top-up, then a $25 purchase.
  const tracked = (await created(server, '/balances', { ledger_id: ledger, identity_id: identity, currency: 'USD', track_fund_lineage: true, allocation_strategy: 'FIFO' })).balance_id;
  await created(server, '/transactions', { precise_amount: 10_000, precision: 100, currency: 'USD', reference: 'compat-topup', source: '@World', destination: tracked, description: 'Top up via card', allow_overdraft: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: 'stripe' } });
  const debit = await created(server, '/transactions', { precise_amount: 2_500, precision: 100, currency: 'USD', reference: 'compat-purchase', source: tracked, destination: '@MerchantSettlement', description: 'Purchase', skip_queue: true });
  return { ledger, identity, balance, other, txn: txn.transaction_id, reference: 'compat-ref-1', hold: hold.transaction_id, rule, tracked, debit: debit.transaction_id };
}

/** `{name}` replaced in every string of a value (paths, bodies, expected bodies). */
function filled<T>(value: T, names: Names): T {
  if (typeof value === 'string') return value.replace(/\{(\w+)\}/g, (whole, name: string) => names[name] ?? whole) as T;
  if (Array.isArray(value)) return value.map((item) => filled(item, names)) as T;
  if (value && typeof value === 'object' && value.constructor === Object) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, filled(item, names)])) as T;
  }
  return value;
}

t.test('Blnk compatibility cases', async (t) => {
  const server = await startTestServer({ dataDir: tempDataDir(), snapshots: { every_events: 0, every_seconds: 0, keep: 2 } });
  t.teardown(() => server.stop());
  const names = await setUp(server);
  for (const blnkCase of BLNK_CASES) {
    const { name, source, method, path, body, status, code, match } = filled<BlnkCase>(blnkCase, names);
    await t.test(`${name} (${source})`, async (t) => {
      const answer = await server.request(method, path, body);
      t.equal(answer.status, status, `${method} ${path}: ${status}${answer.status === status ? '' : ` ${answer.text.slice(0, 300)}`}`);
      if (code) t.equal(answer.body?.error_detail?.code, code, `code ${code}`);
      if (match !== undefined) t.match(answer.body, match, 'the answer holds what Blnk answers');
    });
  }
});
