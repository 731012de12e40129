// Unit tests for engine/mailboxes.ts: per-balance FIFO order, the round-robin ring that keeps a hot
// balance from starving the others, and the bookkeeping (depth, size, lookups) the engine relies on.

import t from 'tap';
import { InvariantViolation } from '../engine/assert.js';
import { Mailboxes } from '../engine/mailboxes.js';
import type { TransactionRecord } from '../engine/records.js';
import { seededRandom } from './helpers/seeded-random.js';

function queued(transactionId: string, source: string): TransactionRecord {
  return {
    transaction_id: transactionId, parent_transaction: '', source, destination: 'bln_sink', reference: transactionId,
    currency: 'USD', precise_amount: 1n, precision: 1n, description: '', status: 'QUEUED', hash: '', allow_overdraft: false,
    inflight: false, skip_queue: false, created_at: 0, inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0,
    meta_data: {},
  };
}

/** What the queue runner does: take the next balance and apply its head (removal moves the ring). */
function runnerOrder(mailboxes: Mailboxes, steps = Number.MAX_SAFE_INTEGER): string[] {
  const order: string[] = [];
  for (let step = 0; step < steps; step += 1) {
    const balanceId = mailboxes.nextReady();
    if (balanceId === undefined) break;
    const head = mailboxes.head(balanceId);
    if (!head) throw new Error(`ready balance ${balanceId} has no head`);
    mailboxes.remove(balanceId, head.transaction_id);
    order.push(head.transaction_id);
  }
  return order;
}

t.test('round-robin: one transaction per balance per turn, FIFO within a balance', async (t) => {
  const mailboxes = new Mailboxes();
  for (const id of ['a1', 'a2', 'a3', 'a4', 'a5']) mailboxes.enqueue('A', queued(id, 'A'));
  mailboxes.enqueue('B', queued('b1', 'B'));
  mailboxes.enqueue('C', queued('c1', 'C'));
  mailboxes.enqueue('C', queued('c2', 'C'));
  t.same(runnerOrder(mailboxes), ['a1', 'b1', 'c1', 'a2', 'c2', 'a3', 'a4', 'a5']);
  t.equal(mailboxes.size, 0);
  t.equal(mailboxes.nextReady(), undefined, 'nothing left in the ring');
});

t.test('a balance that gets work while others wait joins the end of the ring', async (t) => {
  const mailboxes = new Mailboxes();
  mailboxes.enqueue('A', queued('a1', 'A'));
  mailboxes.enqueue('A', queued('a2', 'A'));
  mailboxes.enqueue('B', queued('b1', 'B'));
  t.same(runnerOrder(mailboxes, 1), ['a1']);
  mailboxes.enqueue('C', queued('c1', 'C'));
  mailboxes.enqueue('A', queued('a3', 'A'));
  t.same(runnerOrder(mailboxes), ['b1', 'a2', 'c1', 'a3'], 'B (waiting longest), A (requeued), then the newcomer C');
});

t.test('fairness under a seeded random load: every waiting balance is served within one round', async (t) => {
  const random = seededRandom(t, 'MAILBOX_FAIRNESS_SEED');
  const mailboxes = new Mailboxes();
  const balances = Array.from({ length: 12 }, (_, index) => `B${index}`);
  let next = 0;
  const lastServedStep = new Map<string, number>();
  const waitingSince = new Map<string, number>();
  let worstWait = 0;
  for (let step = 0; step < 5000; step += 1) {
    for (let arrivals = random.int(3); arrivals > 0; arrivals -= 1) {
      // Skewed load: the first balance receives about half of all work.
      const balanceId = random.int(2) === 0 ? 'B0' : random.pick(balances);
      if (mailboxes.depth(balanceId) === 0) waitingSince.set(balanceId, step);
      mailboxes.enqueue(balanceId, queued(`t${next++}`, balanceId));
    }
    const balanceId = mailboxes.nextReady();
    if (balanceId === undefined) continue;
    const head = mailboxes.head(balanceId) as TransactionRecord;
    mailboxes.remove(balanceId, head.transaction_id);
    const since = Math.max(lastServedStep.get(balanceId) ?? -1, waitingSince.get(balanceId) ?? step);
    worstWait = Math.max(worstWait, step - since);
    lastServedStep.set(balanceId, step);
  }
  t.ok(worstWait <= balances.length, `no balance with work waited more than one round (${worstWait} steps, ${balances.length} balances)`);
});

t.test('order inside a mailbox is the contract: removing anything but the head is a bug', async (t) => {
  const mailboxes = new Mailboxes();
  mailboxes.enqueue('A', queued('a1', 'A'));
  mailboxes.enqueue('A', queued('a2', 'A'));
  t.throws(() => mailboxes.remove('A', 'a2'), InvariantViolation, 'not the head');
  t.throws(() => mailboxes.remove('B', 'a1'), InvariantViolation, 'wrong mailbox');
  t.throws(() => mailboxes.enqueue('A', queued('a1', 'A')), InvariantViolation, 'queued twice');
  t.equal(mailboxes.depth('A'), 2, 'nothing changed');
});

t.test('bookkeeping: depth, size, lookups, listing', async (t) => {
  const mailboxes = new Mailboxes();
  t.equal(mailboxes.depth('A'), 0, 'an idle balance has no mailbox');
  mailboxes.enqueue('A', queued('a1', 'A'));
  mailboxes.enqueue('B', queued('b1', 'B'));
  mailboxes.enqueue('A', queued('a2', 'A'));
  t.equal(mailboxes.size, 3);
  t.equal(mailboxes.depth('A'), 2);
  t.equal(mailboxes.head('A')?.transaction_id, 'a1');
  t.ok(mailboxes.isQueued('a2'));
  t.equal(mailboxes.queued('b1')?.source, 'B');
  t.same([...mailboxes.all()].map(([balanceId, record]) => `${balanceId}:${record.transaction_id}`), ['A:a1', 'A:a2', 'B:b1'], 'mailbox order per balance');
  mailboxes.remove('A', 'a1');
  t.notOk(mailboxes.isQueued('a1'));
  t.equal(mailboxes.queued('a1'), undefined);
  t.equal(mailboxes.size, 2);
  mailboxes.remove('A', 'a2');
  t.equal(mailboxes.depth('A'), 0);
  t.same(runnerOrder(mailboxes), ['b1'], 'an emptied balance is skipped by the ring');
});

t.test('a balance drained outside the runner and refilled is still served once per round', async (t) => {
  const mailboxes = new Mailboxes();
  mailboxes.enqueue('A', queued('a1', 'A'));
  mailboxes.enqueue('B', queued('b1', 'B'));
  mailboxes.remove('A', 'a1'); // a synchronous transfer drained A: an empty mailbox leaves the ring
  mailboxes.enqueue('A', queued('a2', 'A'));
  mailboxes.enqueue('A', queued('a3', 'A'));
  t.same(mailboxes.ringOrder(), ['B', 'A'], 'refilled, A joins behind B');
  t.same(runnerOrder(mailboxes), ['b1', 'a2', 'a3']);
});

t.test('long mailboxes keep FIFO order across internal compaction', async (t) => {
  const mailboxes = new Mailboxes();
  const ids = Array.from({ length: 5000 }, (_, index) => `a${index}`);
  for (const id of ids.slice(0, 3000)) mailboxes.enqueue('A', queued(id, 'A'));
  const served: string[] = [];
  for (let index = 0; index < 2000; index += 1) {
    const head = mailboxes.head('A') as TransactionRecord;
    mailboxes.remove('A', head.transaction_id);
    served.push(head.transaction_id);
  }
  for (const id of ids.slice(3000)) mailboxes.enqueue('A', queued(id, 'A'));
  t.equal(mailboxes.depth('A'), 3000);
  t.same([...mailboxes.all()].map(([, record]) => record.transaction_id), ids.slice(2000), 'listing after compaction');
  served.push(...runnerOrder(mailboxes));
  t.same(served, ids, 'every transaction once, in order');
});

t.test('queued totals per balance: what waiting transactions take and give, split shares each on their own balance', async (t) => {
  const mailboxes = new Mailboxes();
  mailboxes.enqueue('A', { ...queued('t1', 'A'), destination: 'B', precise_amount: 70n });
  mailboxes.enqueue('A', { ...queued('t2', 'A'), destination: 'C', precise_amount: 5n });
  // A split waits in its first source's mailbox, but its second share is queued against C.
  mailboxes.enqueue('A', {
    ...queued('t3', ''), destination: 'B', precise_amount: 30n,
    sources: [{ identifier: 'A', balance_id: 'A', distribution: '10', precise_amount: 10n }, { identifier: 'C', balance_id: 'C', distribution: 'left', precise_amount: 20n }],
  });
  // A queued commit moves only what its hold holds: it counts for nothing.
  mailboxes.enqueue('D', { ...queued('t4', 'D'), destination: 'B', precise_amount: 1_000n, action: 'commit', parent_transaction: 'hold' });
  t.same([mailboxes.queuedDebit('A'), mailboxes.queuedDebit('C'), mailboxes.queuedDebit('D')], [85n, 20n, 0n], 'debits');
  t.same([mailboxes.queuedCredit('B'), mailboxes.queuedCredit('C'), mailboxes.queuedCredit('A')], [100n, 5n, 0n], 'credits');
  mailboxes.update('A', { ...queued('t2', 'A'), destination: 'C', precise_amount: 5n, meta_data: { note: 'patched' } });
  t.equal(mailboxes.queuedDebit('A'), 85n, 'a newer version of a queued record replaces the old one in the totals');
  mailboxes.remove('A', 't1');
  t.same([mailboxes.queuedDebit('A'), mailboxes.queuedCredit('B')], [15n, 30n], 'leaving the queue takes it out of the totals');
  runnerOrder(mailboxes);
  t.same([mailboxes.queuedDebit('A'), mailboxes.queuedDebit('C'), mailboxes.queuedCredit('B'), mailboxes.queuedCredit('C')], [0n, 0n, 0n, 0n], 'empty queues, zero totals');
});

t.test('queued totals equal a walk of the queues after any sequence of joins and departures', async (t) => {
  const random = seededRandom(t, 'MAILBOX_SEED');
  const mailboxes = new Mailboxes();
  const balances = ['A', 'B', 'C', 'D'];
  let next = 0;
  for (let step = 0; step < 2_000; step += 1) {
    const balanceId = balances[random.int(balances.length)] as string;
    const head = mailboxes.head(balanceId);
    if (head && random.int(3) === 0) mailboxes.remove(balanceId, head.transaction_id);
    else {
      const destination = balances[(balances.indexOf(balanceId) + 1 + random.int(3)) % balances.length] as string;
      mailboxes.enqueue(balanceId, { ...queued(`t${next += 1}`, balanceId), destination, precise_amount: BigInt(1 + random.int(1_000)) });
    }
  }
  for (const balanceId of balances) {
    let debit = 0n;
    let credit = 0n;
    for (const [, record] of mailboxes.all()) {
      if (record.source === balanceId) debit += record.precise_amount;
      if (record.destination === balanceId) credit += record.precise_amount;
    }
    t.equal(mailboxes.queuedDebit(balanceId), debit, `${balanceId}: queued debit`);
    t.equal(mailboxes.queuedCredit(balanceId), credit, `${balanceId}: queued credit`);
  }
});
