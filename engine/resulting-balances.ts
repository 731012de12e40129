// Balances in the reply (include_balances): a create, a bulk (per item) or a hold's commit or void may
// ask for the state of every balance it touched right after it. The engine fills them in after the
// write's events are applied and before anything else is decided (ledger-engine.ts carryOut), so they
// are exactly as of the write's own seq: no later write can come between, as a second request's read
// could. Asked for by a flag on the command; a write that does not ask pays one comparison.

import { exchangeIndicator } from './exchange.js';
import type { LedgerState } from './ledger-state.js';
import type { BalanceRecord, TransactionRecord } from './records.js';

/**
 * Ids of the balances a transaction moves (both sides; every leg of a split; an exchange's two exchange
 * balances, engine/exchange.ts), each once, in order.
 */
function balanceIdsOf(record: TransactionRecord, state: LedgerState): string[] {
  const ids = [
    ...(record.sources ? record.sources.map((share) => share.balance_id) : [record.source]),
    ...(record.destinations ? record.destinations.map((share) => share.balance_id) : [record.destination]),
  ];
  if (record.exchange) {
    for (const currency of [record.currency, record.exchange.destination_currency]) {
      const via = state.balanceByIndicator(exchangeIndicator(currency), currency);
      if (via) ids.push(via.balance_id);
    }
  }
  return [...new Set(ids)];
}

/**
 * Copies of the balances a transaction touches as they stand now (copies: the state's records go on
 * changing after the answer is built).
 */
export function resultingBalances(record: TransactionRecord, state: LedgerState): BalanceRecord[] {
  const balances: BalanceRecord[] = [];
  for (const id of balanceIdsOf(record, state)) {
    const balance = state.balances.get(id);
    if (balance) balances.push({ ...balance });
  }
  return balances;
}
