// Closed periods in the engine (engine/closed-periods.ts), as decider specs: a close is refused for an
// unknown ledger, a moment not in the past and one not after the last close; it seals the log where it
// stands; after it, every path that moves money dated inside the period is refused (synchronous, queued,
// bulk items, splits) or, for work accepted before the close and carried out after it (a queued
// transaction, a scheduled one falling due), recorded REJECTED with TXN_PERIOD_CLOSED; movements that
// count when they happen (hold commits and voids, refunds, undated transfers) are never refused; balances
// of other ledgers are not touched by the close; and a replay of the log decides the same.

import t from 'tap';
import type { CreateTransactionCommand } from '../engine/commands.js';
import type { PeriodRecord } from '../engine/records.js';
import { given } from './helpers/engine-spec.js';
import { commit, create, hold, ok, processQueue, refund, replayedRig, START_MS, transfer, type EngineRig } from './helpers/engine-rig.js';

const HOUR = 3_600_000;

/** Two ledgers, a balance in each with funds, an hour of time passed: `main` is the ledger closed. */
function ledgers(rig: EngineRig): { main: string; other: string; a: string; b: string; elsewhere: string } {
  const main = ok(rig.engine.run({ op: 'ledger.create', name: 'main', meta_data: {} })).ledger_id;
  const other = ok(rig.engine.run({ op: 'ledger.create', name: 'other', meta_data: {} })).ledger_id;
  const balance = (ledgerId: string): string =>
    ok(rig.engine.run({ op: 'balance.create', ledger_id: ledgerId, currency: 'USD', identity_id: '', indicator: '', meta_data: {} })).balance_id;
  const a = balance(main);
  const b = balance(main);
  const elsewhere = balance(other);
  for (const destination of [a, elsewhere]) {
    ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination, precise_amount: 10_000n, allow_overdraft: true, skip_queue: true }) }));
  }
  rig.clock.advance(HOUR);
  return { main, other, a, b, elsewhere };
}

const close = (ledgerId: string, closesAt: number) => (engine: EngineRig['engine']) => engine.run({ op: 'period.close', ledger_id: ledgerId, closes_at: closesAt });

t.test('a close is refused for an unknown ledger, a moment not in the past, and one not after the last close', async (t) => {
  let ids!: ReturnType<typeof ledgers>;
  const rig = given(t, (_engine, rig) => {
    ids = ledgers(rig);
  });
  const now = rig.clock.ms;
  rig.when(close('ldg_missing', now - 1)).thenRejected('LGR_NOT_FOUND');
  rig.when(close(ids.main, now)).thenRejected('PERIOD_CLOSES_AT_INVALID');
  rig.when(close(ids.main, now + HOUR)).thenRejected('PERIOD_CLOSES_AT_INVALID');
  const closed = rig.when(close(ids.main, now - 10)).then([{ type: 'period.closed', periods: [{ ledger_id: ids.main, closes_at: now - 10 }] }]);
  const period = ok(closed.outcome) as PeriodRecord;
  t.match(period, { period_id: /^prd_/, sealed_seq: closed.log.appendedSeq - 1, sealed_hash: '', created_at: now }, 'it names the last seq before it (a memory log keeps no checksums)');
  rig.when(close(ids.main, now - 10)).thenRejected('PERIOD_NOT_AFTER_LAST');
  rig.when(close(ids.main, now - 20)).thenRejected('PERIOD_NOT_AFTER_LAST');
  rig.when(close(ids.other, now - 20)).then([{ type: 'period.closed' }]);
  rig.when(close(ids.main, now - 5)).then([{ type: 'period.closed' }]);
  t.same(rig.engine.view.periods(ids.main).map((each) => each.closes_at), [now - 10, now - 5], 'the ledger\'s periods, oldest first');
});

t.test('after a close, money dated inside the period is refused on every path that moves it', async (t) => {
  let ids!: ReturnType<typeof ledgers>;
  let closesAt = 0;
  let queued = '';
  let scheduled = '';
  let held = '';
  let paid = '';
  const rig = given(t, (engine, rig) => {
    ids = ledgers(rig);
    closesAt = rig.clock.ms - HOUR / 2;
    const inside = closesAt - 1;
    held = hold(rig, ids.a, ids.b, 1_000n, { effective_date: inside });
    paid = ok(engine.run({ op: 'transaction.create', ...transfer({ source: ids.a, destination: ids.b, precise_amount: 100n, effective_date: inside, skip_queue: true }) })).transaction.transaction_id;
    // Accepted before the close, carried out after it.
    // (From b: the synchronous writes from a below would carry it out first, draining a's mailbox.)
    queued = ok(engine.run({ op: 'transaction.create', ...transfer({ source: ids.b, destination: ids.a, precise_amount: 10n, effective_date: inside }) })).transaction.transaction_id;
    scheduled = ok(engine.run({
      op: 'transaction.create', ...transfer({ source: ids.a, destination: ids.b, precise_amount: 10n, effective_date: inside, scheduled_for: rig.clock.ms + HOUR }),
    })).transaction.transaction_id;
    ok(engine.run({ op: 'period.close', ledger_id: ids.main, closes_at: closesAt }));
  });
  const inside = closesAt;
  const after = closesAt + 1;
  const dated = (fields: Partial<CreateTransactionCommand>): Partial<CreateTransactionCommand> => ({ source: ids.a, destination: ids.b, precise_amount: 10n, ...fields });

  rig.when(create(dated({ effective_date: inside, skip_queue: true }))).thenRejected('TXN_PERIOD_CLOSED');
  rig.when(create(dated({ effective_date: inside }))).thenRejected('TXN_PERIOD_CLOSED');
  rig.when(create(dated({ effective_date: inside, inflight: true, skip_queue: true }))).thenRejected('TXN_PERIOD_CLOSED');
  rig.when(create(dated({ source: '@world', destination: ids.b, effective_date: inside, allow_overdraft: true, skip_queue: true }))).thenRejected('TXN_PERIOD_CLOSED');
  rig.when(create({
    source: ids.a, destination: '', destinations: [{ identifier: ids.elsewhere, distribution: '50%', request: { kind: 'percent', numerator: 50n, denominator: 1n } }, { identifier: ids.b, distribution: 'left', request: { kind: 'left' } }],
    precise_amount: 10n, effective_date: inside, skip_queue: true,
  })).thenRejected('TXN_PERIOD_CLOSED');
  rig.when((engine) => engine.run({ op: 'transaction.bulk', atomic: false, inflight: false, skip_queue: true, transactions: [transfer(dated({ effective_date: inside }))] }))
    .thenRejected('TXN_PERIOD_CLOSED');

  rig.when(create(dated({ effective_date: after, skip_queue: true }))).then([{ type: 'transaction.applied' }]);
  rig.when(create({ source: '@world', destination: ids.elsewhere, precise_amount: 10n, effective_date: inside, allow_overdraft: true, skip_queue: true }))
    .then([{ type: 'transaction.applied' }]);
  rig.when(create(dated({ skip_queue: true }))).then([{ type: 'transaction.applied' }]);

  rig.when(processQueue()).then([{ type: 'transaction.rejected', transactions: [{ transaction_id: queued, status: 'REJECTED', rejection: { code: 'TXN_PERIOD_CLOSED' } }] }]);
  rig.clock.advance(2 * HOUR);
  rig.when((engine) => engine.run({ op: 'timers.fire' }))
    .then([{ type: 'transaction.rejected', transactions: [{ transaction_id: scheduled, status: 'REJECTED', rejection: { code: 'TXN_PERIOD_CLOSED' } }] }]);

  // A hold dated inside the period still commits, and a transfer dated inside it is still refunded:
  // both count when they happen.
  rig.when(commit(held, 400n)).then([{ type: 'transaction.committed', postings: [{ effective_at: undefined }, {}, {}, {}] }]);
  rig.when(refund(paid)).then([{ type: 'transaction.applied', postings: [{ effective_at: undefined }, { effective_at: undefined }] }]);

  const replayed = replayedRig(rig);
  t.same(replayed.engine.view.periods(ids.main), rig.engine.view.periods(ids.main), 'a replay holds the same periods');
  t.match(replayed.engine.run({ op: 'transaction.create', ...transfer(dated({ effective_date: inside, skip_queue: true })) }), { ok: false, rejection: { code: 'TXN_PERIOD_CLOSED' } }, 'and refuses the same');
  t.ok(START_MS < closesAt);
});
