// What moving money does to fund lineage (fund-lineage.ts), decided when the money moves and drafted
// into the decision's scope, so the event that moves the money also carries the lineage it changes:
//   - a debit of a balance that tracks lineage draws on its tagged funds by its allocation strategy
//     (fund-allocation.ts); the record keeps what it drew as `fund_allocation`, which Blnk shows as
//     meta_data.BLNK_FUND_ALLOCATION;
//   - those tagged funds travel to the destination when it tracks lineage too (Blnk's "receive");
//   - a credit from a balance that does not track lineage, tagged by meta_data.BLNK_LINEAGE_PROVIDER,
//     adds that provider's funds to a destination that tracks lineage (the record keeps the tag as
//     `lineage_provider`, so a hold's commit later settles the same provider whatever its metadata
//     became). When the source tracks lineage the tags come from what it spent, and a
//     BLNK_LINEAGE_PROVIDER on the transfer adds nothing (docs/decisions-blnk.md: Blnk counts both).
// A hold moves the inflight amounts; its commit settles part of them in the order the hold's funds
// were allocated, and its void releases the rest. Ledgers where no balance tracks lineage skip all of
// it with one comparison.

import { allocate, sharesBetween, type FundShare } from './fund-allocation.js';
import {
  LINEAGE_PROVIDERS_PER_BALANCE_MAX,
  lineageProviderOf,
  spendable,
  type LineageField,
  type TrackedBalance,
} from './fund-lineage.js';
import type { DecisionScope } from './decision-scope.js';
import { heldAmount, type TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';

/** What a transaction's record keeps of its lineage (records.ts). */
export type LineageFields = Pick<TransactionRecord, 'fund_allocation' | 'lineage_provider'>;

/**
 * The lineage of a transfer or a new hold about to be carried out: moves drafted into the scope, and
 * the fields its record keeps (what it drew on, or the provider it brought); a rejection when the
 * destination would hold the funds of more providers than it may; undefined when it touches no lineage.
 */
export function lineageOfMovement(scope: DecisionScope, record: TransactionRecord): LineageFields | Rejection | undefined {
  const lineage = scope.state.lineage;
  if (lineage.size === 0) return undefined;
  const source = lineage.get(record.source);
  const destination = lineage.get(record.destination);
  if (!source && !destination) return undefined;
  const draft = scope.lineageDraft();
  let shares: FundShare[];
  let traced: LineageFields;
  if (source) {
    const funds = draft.funds(source.balance_id).map((provider) => ({ provider: provider.provider, available: spendable(provider) }));
    shares = allocate(source.allocation_strategy, funds, record.precise_amount);
    if (shares.length === 0) return undefined;
    traced = { fund_allocation: shares };
  } else {
    const provider = lineageProviderOf(record.meta_data);
    if (provider === undefined) return undefined;
    shares = [{ provider, amount: record.precise_amount }];
    traced = { lineage_provider: provider };
  }
  if (destination) {
    const refusal = providerLimitRefusal(scope, destination, shares);
    if (refusal) return refusal;
  }
  const outgoing: LineageField = record.inflight ? 'inflight_spent' : 'spent';
  const incoming: LineageField = record.inflight ? 'inflight_received' : 'received';
  for (const share of shares) {
    if (source) draft.add({ balance_id: source.balance_id, provider: share.provider, field: outgoing, amount: share.amount });
    if (destination) draft.add({ balance_id: destination.balance_id, provider: share.provider, field: incoming, amount: share.amount });
  }
  return traced;
}

/**
 * The lineage of a commit of `amount` (0: a void) of an open hold: the held tagged funds it settles (or
 * releases) moved in the scope, and what the commit settled, for its record. Nothing when the hold
 * carried no tagged funds.
 */
export function lineageOfHoldAction(
  scope: DecisionScope,
  hold: TransactionRecord,
  action: 'commit' | 'void',
  amount: bigint,
): LineageFields {
  const held = heldShares(hold);
  if (!held) return {};
  const lineage = scope.state.lineage;
  const source = hold.fund_allocation ? lineage.get(hold.source) : undefined;
  const destination = lineage.get(hold.destination);
  const committed = hold.committed_amount ?? 0n;
  const part = sharesBetween(held, committed, action === 'commit' ? amount : heldAmount(hold));
  const draft = scope.lineageDraft();
  for (const share of part) {
    for (const [tracked, inflight, settled] of [[source, 'inflight_spent', 'spent'], [destination, 'inflight_received', 'received']] as const) {
      if (!tracked) continue;
      draft.add({ balance_id: tracked.balance_id, provider: share.provider, field: inflight, amount: -share.amount });
      if (action === 'commit') draft.add({ balance_id: tracked.balance_id, provider: share.provider, field: settled, amount: share.amount });
    }
  }
  if (action === 'void' || part.length === 0) return {};
  return hold.fund_allocation ? { fund_allocation: part } : { lineage_provider: hold.lineage_provider as string };
}

/** The tagged funds a hold holds, in the order its commits settle them. */
function heldShares(hold: TransactionRecord): FundShare[] | undefined {
  if (hold.fund_allocation) return hold.fund_allocation;
  if (hold.lineage_provider !== undefined) return [{ provider: hold.lineage_provider, amount: hold.precise_amount }];
  return undefined;
}

/** A balance may hold the funds of at most LINEAGE_PROVIDERS_PER_BALANCE_MAX providers. */
function providerLimitRefusal(scope: DecisionScope, destination: TrackedBalance, shares: FundShare[]): Rejection | undefined {
  const known = scope.lineageDraft().funds(destination.balance_id);
  let count = known.length;
  for (const share of shares) {
    if (known.some((funds) => funds.provider === share.provider)) continue;
    count += 1;
    if (count > LINEAGE_PROVIDERS_PER_BALANCE_MAX) {
      return reject('BAL_LINEAGE_LIMIT_EXCEEDED', `balance ${destination.balance_id} holds the funds of ${LINEAGE_PROVIDERS_PER_BALANCE_MAX} lineage providers, the most it may; ${share.provider} would be one more`);
    }
  }
  return undefined;
}
