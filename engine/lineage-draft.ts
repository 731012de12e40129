// The lineage moves a decision is building (fund-lineage.ts), with their running effect, so that a
// decision covering several movements (split legs, bulk items, a dry run of several steps) allocates
// each debit from the tagged funds as the earlier ones leave them, without touching the state. It is
// to fund lineage what PostingDraft is to balances, and rolls back with it.

import { emptyFunds, type FundLineage, type LineageMove, type ProviderFunds } from './fund-lineage.js';

export class LineageDraft {
  readonly moves: LineageMove[] = [];
  /** Per balance, its providers' funds with the moves drafted so far applied (copies; made on first use). */
  private drafted = new Map<string, ProviderFunds[]>();

  constructor(private readonly lineage: FundLineage) {}

  /**
   * The balance's providers' funds, as the state and the moves drafted so far leave them, in the order
   * their funds first arrived; empty for a balance that tracks no lineage. Read only.
   */
  funds(balanceId: string): readonly ProviderFunds[] {
    return this.drafted.get(balanceId) ?? this.lineage.get(balanceId)?.providers ?? [];
  }

  add(move: LineageMove): void {
    this.moves.push(move);
    this.applyDrafted(move);
  }

  mark(): number {
    return this.moves.length;
  }

  /** Drops the moves after `mark` (rare: a refused movement inside a decision), recomputing from the rest. */
  rollback(mark: number): void {
    if (mark >= this.moves.length) return;
    this.moves.splice(mark);
    this.drafted = new Map();
    for (const move of this.moves) this.applyDrafted(move);
  }

  private applyDrafted(move: LineageMove): void {
    let providers = this.drafted.get(move.balance_id);
    if (!providers) {
      providers = (this.lineage.get(move.balance_id)?.providers ?? []).map((funds) => ({ ...funds }));
      this.drafted.set(move.balance_id, providers);
    }
    let funds = providers.find((provider) => provider.provider === move.provider);
    if (!funds) providers.push((funds = emptyFunds(move.provider)));
    funds[move.field] += move.amount;
  }
}
