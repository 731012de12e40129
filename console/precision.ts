// The precision each currency's amounts are written at. A balance carries none: its figures are sums
// of its transactions' precise amounts, and each transaction carries the precision it was recorded at
// (100: cents; 1, the API's default: whole units). So the console learns a currency's precision from
// the ledger's own transactions: every transaction it reads teaches it, and a page showing balances in
// a currency it has not seen asks the API for that currency's newest transaction. When a currency has
// none (or transactions may not be read with this key) its amounts are shown in the smallest unit, and
// say so.

import { api } from './api.js';
import { amountDigits } from './format.js';
import type { FilterAnswer, Transaction } from './records.js';

const known = new Map<string, string>();
/** Currencies asked about (answered or not), so a page asks once. */
const asked = new Set<string>();

/** Learns from transactions read, newest first: a currency's newest transaction decides. */
export function learnPrecisions(transactions: readonly Transaction[]): void {
  for (let index = transactions.length - 1; index >= 0; index -= 1) {
    const transaction = transactions[index] as Transaction;
    known.set(transaction.currency, amountDigits(transaction.precision));
  }
}

export function precisionOf(currency: string): string | undefined {
  return known.get(currency);
}

/** Asks for each currency not known yet (once per session); a refusal leaves it unknown. */
export async function ensurePrecisions(currencies: Iterable<string>, signal?: AbortSignal): Promise<void> {
  const unknown = [...new Set(currencies)].filter((currency) => !known.has(currency) && !asked.has(currency));
  await Promise.all(unknown.map(async (currency) => {
    asked.add(currency);
    try {
      const answer = await api<FilterAnswer<Transaction>>('POST', '/transactions/filter', {
        body: { filters: [{ field: 'currency', operator: 'eq', value: currency }], sort_by: 'created_at', sort_order: 'desc', limit: 1 },
        signal,
      });
      learnPrecisions(answer.data);
    } catch {
      // Refused (this key may not read transactions) or failed: shown in the smallest unit; asked again
      // only on a later page that was cut off before the answer came.
      if (signal?.aborted) asked.delete(currency);
    }
  }));
}
