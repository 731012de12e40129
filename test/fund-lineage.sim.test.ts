// Fund lineage over seeded random histories (test/helpers/random-history.ts: balances that track
// lineage with every strategy, tagged credits, holds with partial commits, voids, expiries, refunds,
// splits, bulk, queued work): the state the moves built agrees with what the transaction records say
// they moved, counted independently from the records alone (settled funds from the settled records,
// held funds from what the open holds still hold); every allocation is exact and within its
// transaction; and a replay of the log builds the same lineage.

import t from 'tap';
import { sharesBetween, type FundShare } from '../engine/fund-allocation.js';
import { applyEvent, LedgerState } from '../engine/ledger-state.js';
import { spendable } from '../engine/fund-lineage.js';
import { heldAmount, isSplit, type TransactionRecord } from '../engine/records.js';
import { NullTransactionStore } from '../lookups/null-transaction-store.js';
import { randomHistory } from './helpers/random-history.js';

const SEEDS = (process.env.FOLIO_SIM_SEEDS ?? '11,12,13,14').split(',').map(Number);
const STEPS = 1_500;

const key = (balanceId: string, provider: string): string => `${balanceId} ${provider}`;
const add = (totals: Map<string, bigint>, at: string, amount: bigint): void => {
  totals.set(at, (totals.get(at) ?? 0n) + amount);
};
const sum = (shares: readonly FundShare[]): bigint => shares.reduce((total, share) => total + share.amount, 0n);

for (const seed of SEEDS) {
  t.test(`seed ${seed}`, async (t) => {
    const history = randomHistory(seed, STEPS);
    const state = history.engine.state;
    const tracked = (balanceId: string): boolean => state.lineage.get(balanceId) !== undefined;
    const problems: string[] = [];

    // Every allocation: distinct providers, positive shares, no more than the transaction moves.
    const settled = new Map<string, TransactionRecord>();
    let moves = 0;
    for (const event of history.log.events) {
      moves += event.lineage?.length ?? 0;
      for (const move of event.lineage ?? []) if (!tracked(move.balance_id)) problems.push(`a move on ${move.balance_id}, which does not track lineage`);
      for (const record of event.transactions ?? []) {
        const shares = record.fund_allocation;
        if (shares) {
          if (!tracked(record.source)) problems.push(`${record.transaction_id}: an allocation from a balance that does not track lineage`);
          if (new Set(shares.map((share) => share.provider)).size !== shares.length) problems.push(`${record.transaction_id}: a provider twice`);
          if (shares.some((share) => share.amount <= 0n)) problems.push(`${record.transaction_id}: a share that is not positive`);
          if (sum(shares) > record.precise_amount) problems.push(`${record.transaction_id}: allocates ${sum(shares)} of ${record.precise_amount}`);
        }
        if (record.lineage_provider !== undefined && (!tracked(record.destination) || tracked(record.source))) {
          problems.push(`${record.transaction_id}: a provider tag kept where it tags nothing`);
        }
        // What settled money: transfers, legs, refunds and commits (not the holds themselves, nor split parents).
        const isHold = record.inflight && record.action === undefined;
        if (record.status === 'APPLIED' && !isHold && !isSplit(record)) settled.set(record.transaction_id, record);
      }
    }

    // Settled tagged funds, counted from the records alone.
    const spent = new Map<string, bigint>();
    const received = new Map<string, bigint>();
    for (const record of settled.values()) {
      if (record.fund_allocation) {
        for (const share of record.fund_allocation) {
          add(spent, key(record.source, share.provider), share.amount);
          if (tracked(record.destination)) add(received, key(record.destination, share.provider), share.amount);
        }
      } else if (record.lineage_provider !== undefined) add(received, key(record.destination, record.lineage_provider), record.precise_amount);
    }
    let providers = 0;
    for (const balance of state.lineage.entries()) {
      for (const funds of balance.providers) {
        providers += 1;
        const at = key(balance.balance_id, funds.provider);
        if (funds.spent !== (spent.get(at) ?? 0n)) problems.push(`${at}: spent ${funds.spent}, the records say ${spent.get(at) ?? 0n}`);
        if (funds.received !== (received.get(at) ?? 0n)) problems.push(`${at}: received ${funds.received}, the records say ${received.get(at) ?? 0n}`);
        if (spendable(funds) < 0n || funds.inflight_received < 0n || funds.inflight_spent < 0n) problems.push(`${at}: below zero`);
      }
    }
    // Held tagged funds are what the open holds still hold of their tagged shares, settled in order.
    const heldOut = new Map<string, bigint>();
    const heldIn = new Map<string, bigint>();
    let openTagged = 0;
    for (const hold of state.holds.values()) {
      const shares = hold.fund_allocation ?? (hold.lineage_provider !== undefined ? [{ provider: hold.lineage_provider, amount: hold.precise_amount }] : undefined);
      if (!shares || isSplit(hold)) continue;
      openTagged += 1;
      for (const share of sharesBetween(shares, hold.committed_amount ?? 0n, heldAmount(hold))) {
        if (hold.fund_allocation) add(heldOut, key(hold.source, share.provider), share.amount);
        if (tracked(hold.destination)) add(heldIn, key(hold.destination, share.provider), share.amount);
      }
    }
    for (const balance of state.lineage.entries()) {
      for (const funds of balance.providers) {
        const at = key(balance.balance_id, funds.provider);
        if (funds.inflight_spent !== (heldOut.get(at) ?? 0n)) problems.push(`${at}: holds out ${funds.inflight_spent}, the open holds say ${heldOut.get(at) ?? 0n}`);
        if (funds.inflight_received !== (heldIn.get(at) ?? 0n)) problems.push(`${at}: holds in ${funds.inflight_received}, the open holds say ${heldIn.get(at) ?? 0n}`);
      }
    }

    const replayed = new LedgerState(new NullTransactionStore());
    for (const event of history.log.events) applyEvent(replayed, event);
    t.same([...replayed.lineage.entries()], [...state.lineage.entries()], 'a replay builds the same lineage');
    t.same(problems.slice(0, 10), [], `${moves} moves, ${settled.size} settled records, ${providers} providers, ${openTagged} open tagged holds: consistent`);
    t.ok(moves > 0, 'the history exercised lineage');
  });
}
