// Fund lineage as the working state keeps it (Blnk's fund lineage, docs/decisions-blnk.md): for every
// balance that tracks it, what each provider's tagged funds amount to. Blnk keeps this in "shadow"
// balances, one per provider and identity, moved by shadow transactions after the fact; here it is a
// part of the state of its own, moved by the `lineage` moves a decision logs in the same event as the
// money (decide-lineage.ts decides them), so it is exact at every seq and replays, snapshots and
// restores with everything else. Per provider:
//   received           tagged funds settled into the balance (Blnk's `amount`, the shadow's debit)
//   spent              tagged funds settled out of it (Blnk's `spent`, the shadow's credit)
//   inflight_received  tagged funds held on their way in (not spendable until committed)
//   inflight_spent     tagged funds reserved by holds on their way out (not spendable again)
// Providers are listed in the order their funds first reached the balance, which is what FIFO and LIFO
// order by (Blnk orders by when the provider's mapping was made, its first credit).

import { assert, fail } from './assert.js';
import type { AllocationStrategy } from './fund-allocation.js';
import type { MetaData } from './records.js';

/** The metadata key that tags a credit with its provider (Blnk's LineageProviderKey). */
export const LINEAGE_PROVIDER_KEY = 'BLNK_LINEAGE_PROVIDER';
/** Where a debit's allocation shows in its metadata (Blnk's LineageFundAllocation). */
export const FUND_ALLOCATION_KEY = 'BLNK_FUND_ALLOCATION';
/** Longest provider tag, in characters. */
export const LINEAGE_PROVIDER_LENGTH_MAX = 128;
/** Providers one balance may hold funds of: each debit looks at all of them. */
export const LINEAGE_PROVIDERS_PER_BALANCE_MAX = 100;

export type LineageField = 'received' | 'spent' | 'inflight_received' | 'inflight_spent';

/**
 * One change to one provider's funds in one balance. `received` and `spent` only grow; the inflight
 * amounts grow when a hold is placed and shrink when it is committed or voided, never below zero.
 */
export interface LineageMove {
  balance_id: string;
  provider: string;
  field: LineageField;
  amount: bigint;
}

export interface ProviderFunds {
  provider: string;
  received: bigint;
  spent: bigint;
  inflight_received: bigint;
  inflight_spent: bigint;
}

/** A balance that tracks fund lineage: how it allocates debits, and its providers' funds in arrival order. */
export interface TrackedBalance {
  balance_id: string;
  allocation_strategy: AllocationStrategy;
  providers: ProviderFunds[];
}

/** What a debit can still draw on of a provider's funds: settled in, less settled out, less reserved. */
export function spendable(funds: ProviderFunds): bigint {
  return funds.received - funds.spent - funds.inflight_spent;
}

export function emptyFunds(provider: string): ProviderFunds {
  return { provider, received: 0n, spent: 0n, inflight_received: 0n, inflight_spent: 0n };
}

/**
 * The provider a transaction's metadata tags its funds with, if it names one that can be a tag: a
 * string, not empty, at most LINEAGE_PROVIDER_LENGTH_MAX characters (anything else tags nothing, as in
 * Blnk, where a value that is not a string is ignored; new transactions with a bad one are refused
 * before they are recorded, see lineageProviderRefusal).
 */
export function lineageProviderOf(meta: MetaData): string | undefined {
  const provider = meta[LINEAGE_PROVIDER_KEY];
  if (typeof provider !== 'string' || provider === '' || provider.length > LINEAGE_PROVIDER_LENGTH_MAX) return undefined;
  return provider;
}

/** Why a new transaction's provider tag cannot be one (too long), if it cannot. */
export function lineageProviderProblem(meta: MetaData): string | undefined {
  const provider = meta[LINEAGE_PROVIDER_KEY];
  if (typeof provider === 'string' && provider.length > LINEAGE_PROVIDER_LENGTH_MAX) {
    return `meta_data.${LINEAGE_PROVIDER_KEY} is longer than ${LINEAGE_PROVIDER_LENGTH_MAX} characters`;
  }
  return undefined;
}

export class FundLineage {
  private readonly balances = new Map<string, TrackedBalance>();

  /** How many balances track lineage: 0 lets every decision skip lineage at once. */
  get size(): number {
    return this.balances.size;
  }

  /** A new balance that tracks lineage, with no funds yet. */
  track(balanceId: string, strategy: AllocationStrategy): void {
    assert(!this.balances.has(balanceId), `balance ${balanceId} already tracks lineage`);
    this.balances.set(balanceId, { balance_id: balanceId, allocation_strategy: strategy, providers: [] });
  }

  get(balanceId: string): TrackedBalance | undefined {
    return this.balances.get(balanceId);
  }

  /** Applies one logged move, refusing moves no valid decision makes. */
  apply(move: LineageMove): void {
    const tracked = this.balances.get(move.balance_id);
    if (!tracked) fail(`lineage move on ${move.balance_id}, which does not track lineage`);
    let funds = tracked.providers.find((provider) => provider.provider === move.provider);
    if (!funds) {
      assert(tracked.providers.length < LINEAGE_PROVIDERS_PER_BALANCE_MAX, `balance ${move.balance_id} has too many lineage providers`);
      funds = emptyFunds(move.provider);
      tracked.providers.push(funds);
    }
    if (move.field === 'received' || move.field === 'spent') assert(move.amount >= 0n, `negative ${move.field} lineage move`);
    funds[move.field] += move.amount;
    assert(funds[move.field] >= 0n, `lineage ${move.field} of ${move.provider} on ${move.balance_id} below zero`);
    assert(spendable(funds) >= 0n, `lineage of ${move.provider} on ${move.balance_id} spent beyond what it received`);
  }

  /** Every tracked balance, in the order they began tracking (snapshots, hashing). */
  entries(): IterableIterator<TrackedBalance> {
    return this.balances.values();
  }

  /** Puts back a tracked balance as a snapshot stored it. */
  restore(tracked: TrackedBalance): void {
    assert(!this.balances.has(tracked.balance_id), `balance ${tracked.balance_id} restored twice`);
    this.balances.set(tracked.balance_id, tracked);
  }
}
