// The peers bench's Postgres ledger (bench/postgres-peer) against a real PostgreSQL started in a temp dir:
// it must keep the ledger's invariants, or the bench would compare Folio with something that does less.
// Balances sum to zero, a reused reference and an overdraft are refused with nothing written, a batch
// is all or nothing, concurrent transfers over the same balances neither deadlock nor lose a unit, and
// amounts beyond 2^53 stay exact.

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
    t.same(await ledger.transfer(transfer('world', id, FUNDS, { allowOverdraft: true })), { ok: true }, `fund ${id}`);
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
  t.same(await ledger.transfer(transfer('a', 'b', 5n, { reference: 'invoice-1' })), { ok: true });
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
  t.same(await ledger.transfer(transfer('c', 'd', before!)), { ok: true }, 'exactly the whole balance is allowed');
  t.equal(await ledger.balance('c'), 0n);
  t.same(await ledger.transfer(transfer('c', 'd', 10n, { allowOverdraft: true })), { ok: true }, 'allowed overdraft');
  t.equal(await ledger.balance('c'), -10n);
  t.same(await ledger.transfer(transfer('d', 'c', before! + 10n)), { ok: true }, 'back to where it was');
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
    t.same(await ledger.transfer(transfer('big-1', 'big-2', amount, { allowOverdraft: true })), { ok: true });
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
