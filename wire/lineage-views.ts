// Fund lineage as Blnk's two lineage routes answer it (BalanceLineage and TransactionLineage of Blnk's
// lineage.go / lineage_queries.go), from the state's tagged funds (engine/fund-lineage.ts) and a
// debit's recorded allocation. Amounts are exact integers in the smallest unit (Blnk's big.Int, which
// Go writes as a JSON number). Folio keeps no shadow balances or shadow transactions (see
// docs/decisions-blnk.md): their ids are empty and the list of shadow transactions is empty.

import { z } from 'zod';
import type { TrackedBalance } from '../engine/fund-lineage.js';
import type { TransactionRecord } from '../engine/records.js';

const providerJsonSchema = z.object({
  provider: z.string(),
  amount: z.bigint().meta({ description: 'Tagged funds of this provider settled into the balance' }),
  available: z.bigint().meta({ description: 'amount less spent (funds reserved by outgoing holds included, as in Blnk)' }),
  spent: z.bigint().meta({ description: 'Tagged funds of this provider settled out of the balance' }),
  shadow_balance_id: z.string().meta({ description: 'Always empty: Folio keeps no shadow balances' }),
  inflight_amount: z.bigint().meta({ description: 'Folio\'s: tagged funds held on their way in (not spendable yet)' }),
  inflight_spent: z.bigint().meta({ description: 'Folio\'s: tagged funds reserved by holds on their way out' }),
});

export const balanceLineageJsonSchema = z.object({
  balance_id: z.string(),
  total_with_lineage: z.bigint().meta({ description: 'The sum of the providers\' available funds' }),
  aggregate_balance_id: z.string().meta({ description: 'Always empty: Folio keeps no aggregate balance' }),
  providers: z.array(providerJsonSchema),
}).meta({ id: 'BalanceLineage' });

export const transactionLineageJsonSchema = z.object({
  transaction_id: z.string(),
  fund_allocation: z.array(z.object({ provider: z.string(), amount: z.bigint() })).optional()
    .meta({ description: 'A debit of a balance that tracks lineage: the tagged funds it drew on (absent otherwise, as in Blnk)' }),
  shadow_transactions: z.array(z.object({})).meta({ description: 'Always empty: Folio records lineage without shadow transactions' }),
}).meta({ id: 'TransactionLineage' });

/** GET /balances/:id/lineage: the providers in the order their funds first arrived. */
export function balanceLineageView(tracked: TrackedBalance): Record<string, unknown> {
  let total = 0n;
  const providers = tracked.providers.map((funds) => {
    const available = funds.received - funds.spent;
    total += available;
    return {
      provider: funds.provider,
      amount: funds.received,
      available,
      spent: funds.spent,
      shadow_balance_id: '',
      inflight_amount: funds.inflight_received,
      inflight_spent: funds.inflight_spent,
    };
  });
  return { balance_id: tracked.balance_id, total_with_lineage: total, aggregate_balance_id: '', providers };
}

/** GET /transactions/:id/lineage. */
export function transactionLineageView(record: TransactionRecord): Record<string, unknown> {
  const view: Record<string, unknown> = { transaction_id: record.transaction_id };
  if (record.fund_allocation) view.fund_allocation = record.fund_allocation.map((share) => ({ provider: share.provider, amount: share.amount }));
  view.shadow_transactions = [];
  return view;
}
