// The peers bench's Postgres ledger (bench/postgres-peer) against a real PostgreSQL started in a temp dir:
// it must keep the ledger's invariants, or the bench would compare Folio with something that does less.
// Balances sum to zero, a reused reference and an overdraft are refused with nothing written, a batch
// is all or nothing, concurrent transfers over the same balances neither deadlock nor lose a unit, and
// amounts beyond 2^53 stay exact. Behind the bench's Koa server (dist/bench/bare-koa-server.js, built by
// `npm test`) each POST is the peer's transfer or batch, answered once committed, refusals as 422.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import t, { type Test } from 'tap';
import { PeerLedger, type PeerTransfer } from '../bench/postgres-peer/peer-ledger.js';
import { startPostgres, type RunningPostgres } from '../bench/postgres/postgres-server.js';
import { seededRandom } from './helpers/seeded-random.js';

const FUNDS = 1_000_000n;

function transfer(source: string, destination: string, amount: bigint, fields: Partial<PeerTransfer> = {}): PeerTransfer {
  return { reference: '', source, destination, amount, currency: 'USD', allowOverdraft: false, ...fields };
}

let server: RunningPostgres;
let ledger: PeerLedger;

t.before(async () => {
  server = await startPostgres({ label: 'peer-test' });
  ledger = await PeerLedger.connect(server.connection);
  await ledger.install();
  await ledger.createBalances(['world', 'a', 'b', 'c', 'd', 'big-1', 'big-2'], 'USD');
  await ledger.createBalances(['euro'], 'EUR');
  for (const id of ['a', 'b', 'c', 'd']) {
    t.match(await ledger.transfer(transfer('world', id, FUNDS, { allowOverdraft: true })), { ok: true }, `fund ${id}`);
  }
});

t.teardown(async () => {
  await ledger?.close();
  await server?.stop();
});

async function expectZeroSums(t: Test): Promise<void> {
  for (const [currency, sums] of await ledger.sums()) {
    t.equal(sums.balance, 0n, `${currency} balances sum to zero`);
    t.equal(sums.creditsLessDebits, 0n, `${currency} credits equal debits`);
  }
}

t.test('the server listens on loopback and commits durably', async (t) => {
  t.equal(server.connection.host, '127.0.0.1');
  t.match(server.version, /^PostgreSQL \d+/);
  const client = new pg.Client(server.connection);
  await client.connect();
  for (const [setting, expected] of [['fsync', 'on'], ['synchronous_commit', 'on'], ['listen_addresses', '127.0.0.1']] as const) {
    const { rows } = await client.query<Record<string, string>>(`SHOW ${setting}`);
    t.equal(rows[0]?.[setting], expected, `${setting} = ${expected}`);
  }
  await client.end();
});

t.test('a reused reference is refused and writes nothing', async (t) => {
  t.match(await ledger.transfer(transfer('a', 'b', 5n, { reference: 'invoice-1' })), { ok: true, transactionId: /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/ }, 'the id the peer gave it (a UUIDv7)');
  const count = await ledger.transactionCount();
  t.same(await ledger.transfer(transfer('c', 'd', 7n, { reference: 'invoice-1' })), { ok: false, code: 'TXN_DUPLICATE_REFERENCE', index: 0 });
  t.equal(await ledger.transactionCount(), count, 'no transaction recorded');
  t.equal(await ledger.balance('c'), FUNDS, 'source untouched');
  t.equal(await ledger.balance('d'), FUNDS, 'destination untouched');
  await ledger.transfer(transfer('b', 'a', 5n));
  await expectZeroSums(t);
});

t.test('an overdraft is refused unless allowed', async (t) => {
  const before = await ledger.balance('c');
  t.same(await ledger.transfer(transfer('c', 'd', before! + 1n)), { ok: false, code: 'TXN_INSUFFICIENT_FUNDS', index: 0 });
  t.equal(await ledger.balance('c'), before, 'nothing moved');
  t.match(await ledger.transfer(transfer('c', 'd', before!)), { ok: true }, 'exactly the whole balance is allowed');
  t.equal(await ledger.balance('c'), 0n);
  t.match(await ledger.transfer(transfer('c', 'd', 10n, { allowOverdraft: true })), { ok: true }, 'allowed overdraft');
  t.equal(await ledger.balance('c'), -10n);
  t.match(await ledger.transfer(transfer('d', 'c', before! + 10n)), { ok: true }, 'back to where it was');
  await expectZeroSums(t);
});

t.test('other refusals come back as codes', async (t) => {
  t.same(await ledger.transfer(transfer('a', 'a', 1n)), { ok: false, code: 'TXN_SAME_SOURCE_DESTINATION', index: 0 });
  t.same(await ledger.transfer(transfer('a', 'nobody', 1n)), { ok: false, code: 'BAL_NOT_FOUND', index: 0 });
  t.same(await ledger.transfer(transfer('a', 'euro', 1n)), { ok: false, code: 'TXN_CURRENCY_MISMATCH', index: 0 });
  t.same(await ledger.transfer(transfer('a', 'b', 0n)), { ok: false, code: 'TXN_INVALID_AMOUNT', index: 0 });
  t.same(await ledger.transferBatch([], 'USD'), { ok: false, code: 'TXN_INVALID_BATCH', index: 0 });
});

t.test('a batch is all or nothing, each item seeing the ones before it', async (t) => {
  const count = await ledger.transactionCount();
  const a = await ledger.balance('a');
  const refused = await ledger.transferBatch([
    transfer('a', 'b', 3n), transfer('b', 'c', 2n), transfer('a', 'd', a!), // a has 3 less by then
  ], 'USD');
  t.same(refused, { ok: false, code: 'TXN_INSUFFICIENT_FUNDS', index: 2 });
  t.equal(await ledger.transactionCount(), count, 'nothing recorded');
  t.equal(await ledger.balance('a'), a, 'nothing moved');
  t.same(await ledger.transferBatch([transfer('a', 'b', 3n), transfer('b', 'a', 3n, { reference: 'dup' }), transfer('c', 'd', 1n, { reference: 'dup' })], 'USD'),
    { ok: false, code: 'TXN_DUPLICATE_REFERENCE', index: 2 }, 'a reference reused inside the batch');
  t.same(await ledger.transferBatch([transfer('a', 'b', 3n), transfer('b', 'a', 3n)], 'USD'), { ok: true });
  t.equal(await ledger.transactionCount(), count + 2);
  await expectZeroSums(t);
});

t.test('amounts beyond 2^53 stay exact', async (t) => {
  const amounts = [2n ** 53n + 1n, 10n ** 39n + 7n, 10n ** 40n - 1n];
  let expected = 0n;
  for (const amount of amounts) {
    t.match(await ledger.transfer(transfer('big-1', 'big-2', amount, { allowOverdraft: true })), { ok: true });
    expected += amount;
  }
  t.equal(await ledger.balance('big-2'), expected, 'the sum to the last unit');
  t.equal(await ledger.balance('big-1'), -expected);
  t.same(await ledger.transfer(transfer('big-1', 'big-2', 10n ** 40n, { allowOverdraft: true })), { ok: false, code: 'TXN_INVALID_AMOUNT', index: 0 },
    'past 40 digits, as in Folio');
  await expectZeroSums(t);
});

t.test('concurrent transfers and batches over the same balances neither deadlock nor lose a unit', async (t) => {
  const random = seededRandom(t, 'FOLIO_PEER_SEED');
  const ids = ['a', 'b', 'c', 'd'];
  const before = new Map<string, bigint>();
  for (const id of ids) before.set(id, (await ledger.balance(id))!);
  const expected = new Map(before);
  const clients = await Promise.all(Array.from({ length: 8 }, () => PeerLedger.connect(server.connection)));
  const rounds = 60;
  // Every batch names its balances in a random order, so only the peer's ordered locking avoids deadlocks.
  const work = clients.map((client) => {
    const plan = Array.from({ length: rounds }, () => Array.from({ length: 1 + random.int(4) }, () => {
      const source = random.pick(ids);
      const destination = random.pick(ids.filter((id) => id !== source));
      return transfer(source, destination, BigInt(1 + random.int(100)));
    }));
    for (const batch of plan) {
      for (const item of batch) {
        expected.set(item.source, expected.get(item.source)! - item.amount);
        expected.set(item.destination, expected.get(item.destination)! + item.amount);
      }
    }
    return (async () => {
      for (const batch of plan) {
        const outcome = batch.length === 1 ? await client.transfer(batch[0]!) : await client.transferBatch(batch, 'USD');
        if (!outcome.ok) throw new Error(`refused: ${outcome.code} at ${outcome.index}`);
      }
    })();
  });
  await Promise.all(work);
  await Promise.all(clients.map((client) => client.close()));
  for (const id of ids) t.equal(await ledger.balance(id), expected.get(id), `balance ${id} moved by exactly its transfers`);
  await expectZeroSums(t);
});

const KOA_SERVER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/bench/bare-koa-server.js');

t.test('behind Koa, each POST is the peer\'s transfer or batch, answered once committed', async (t) => {
  const child = spawn(process.execPath, [KOA_SERVER], {
    env: { ...process.env, FOLIO_BENCH_PEER: JSON.stringify({ connection: server.connection, pool_connections: 2 }) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  t.teardown(async () => {
    child.stdin.end();
    await exited;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error(`the Koa server exited: ${stderr}`)));
  });
  const post = async (route: string, body: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(url + route, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
  const aBefore = (await ledger.balance('a'))!;
  const bBefore = (await ledger.balance('b'))!;

  const single = await post('/transactions', { description: 'test', source: 'a', destination: 'b', precise_amount: 3, currency: 'USD', skip_queue: true });
  t.equal(single.status, 201);
  t.match(single.body, { transaction_id: /^[0-9a-f]{8}-/, source: 'a', destination: 'b', precise_amount: '3', status: 'APPLIED' });
  t.equal(single.body.reference, `ref_${single.body.transaction_id}`);
  t.equal(await ledger.balance('a'), aBefore - 3n, 'committed before the answer');

  // More requests in flight than the pool has connections: they wait for one, none fails.
  const many = await Promise.all(Array.from({ length: 8 }, () => post('/transactions', { source: 'b', destination: 'a', precise_amount: '1', currency: 'USD' })));
  t.same(many.map((answer) => answer.status), Array(8).fill(201));

  const bulk = await post('/transactions/bulk', {
    atomic: true, transactions: [{ source: 'a', destination: 'b', precise_amount: 2, currency: 'USD' }, { source: 'b', destination: 'a', precise_amount: 7, currency: 'USD' }],
  });
  t.equal(bulk.status, 201);
  t.match(bulk.body, { status: 'applied', transaction_count: 2 });
  t.equal(await ledger.balance('a'), aBefore - 3n + 8n - 2n + 7n);
  t.equal(await ledger.balance('b'), bBefore + 3n - 8n + 2n - 7n);

  const count = await ledger.transactionCount();
  const overdraft = await post('/transactions/bulk', {
    transactions: [{ source: 'a', destination: 'b', precise_amount: 1, currency: 'USD' }, { source: 'c', destination: 'd', precise_amount: (FUNDS * 10n).toString(), currency: 'USD' }],
  });
  t.same([overdraft.status, overdraft.body], [422, { error: { code: 'TXN_INSUFFICIENT_FUNDS', index: 1 } }]);
  t.equal(await ledger.transactionCount(), count, 'a refused batch writes nothing');
  for (const body of [{ source: 'a', destination: 'b', precise_amount: 1.5, currency: 'USD' }, { source: 'a', precise_amount: 1, currency: 'USD' }, [1]]) {
    t.equal((await post('/transactions', body)).status, 400, `malformed: ${JSON.stringify(body)}`);
  }
  await expectZeroSums(t);
});
