// The read side of the working state, as named queries: what every reader outside engine/ and runtime/ asks
// of the ledger (http/ through its LedgerCore port, reconciliation runs, the API key check). Records are
// handed out as the state holds them and must not be changed by the caller. Nothing here writes.
//
// Keeping reads to this list (the architecture test forbids `engine.state` outside engine/ and runtime/) is
// what lets them be answered elsewhere: by the engine's thread for an HTTP worker, or by a standby.

import { hooksWithoutSecrets } from './decide-registry.js';
import type { TrackedBalance } from './fund-lineage.js';
import type { LedgerState } from './ledger-state.js';
import type {
  ApiKeyRecord,
  BalanceRecord,
  HookRecord,
  IdentityRecord,
  LedgerRecord,
  MonitorRecord,
  PeriodRecord,
  TransactionRecord,
} from './records.js';
import type { MatchingRuleRecord, ReconciliationRecord, UploadRecord } from './reconciliation-records.js';

/** A page of records, newest first. */
export interface Page {
  offset: number;
  limit: number;
}

export class LedgerView {
  constructor(private readonly state: LedgerState, private readonly clock: () => number) {}

  /** The engine's time now (never before the last event). */
  currentTime(): number {
    return this.clock();
  }

  /** Transactions waiting in balances' mailboxes. */
  queuedCount(): number {
    return this.state.mailboxes.size;
  }

  /** When the next timer falls due (epoch ms), if any is set. */
  nextTimerAt(): number | undefined {
    return this.state.timers.nextAt();
  }

  ledger(ledgerId: string): LedgerRecord | undefined {
    return this.state.ledgers.get(ledgerId);
  }

  ledgers(page: Page): LedgerRecord[] {
    return newestFirst(this.state.ledgers, page);
  }

  /** A ledger's closed periods, oldest first (closed-periods.ts). */
  periods(ledgerId: string): readonly PeriodRecord[] {
    return this.state.periods.of(ledgerId);
  }

  balance(balanceId: string): BalanceRecord | undefined {
    return this.state.balances.get(balanceId);
  }

  balanceExists(balanceId: string): boolean {
    return this.state.balances.has(balanceId);
  }

  /**
   * What the transactions waiting in mailboxes will take from the balance and give to it once carried out
   * (Blnk's queued_debit_balance and queued_credit_balance; mailboxes.ts keeps them as they change).
   */
  queuedAmounts(balanceId: string): { queued_debit_balance: bigint; queued_credit_balance: bigint } {
    return { queued_debit_balance: this.state.mailboxes.queuedDebit(balanceId), queued_credit_balance: this.state.mailboxes.queuedCredit(balanceId) };
  }

  /** The tagged funds of a balance that tracks fund lineage (fund-lineage.ts); undefined for any other. */
  fundLineage(balanceId: string): TrackedBalance | undefined {
    return this.state.lineage.get(balanceId);
  }

  balanceByIndicator(indicator: string, currency: string): BalanceRecord | undefined {
    return this.state.balanceByIndicator(indicator, currency);
  }

  balances(page: Page): BalanceRecord[] {
    return this.state.balances.newestFirst(page.offset, page.limit);
  }

  /** A transaction by id, whatever its status (queued, open holds and scheduled ones included). */
  transaction(transactionId: string): TransactionRecord | undefined {
    return this.state.transaction(transactionId);
  }

  transactionByReference(reference: string): TransactionRecord | undefined {
    const transactionId = this.state.transactions.idForReference(reference);
    return transactionId === undefined ? undefined : this.state.transaction(transactionId);
  }

  identity(identityId: string): IdentityRecord | undefined {
    return this.state.identities.get(identityId);
  }

  identities(page: Page): IdentityRecord[] {
    return newestFirst(this.state.identities, page);
  }

  apiKey(apiKeyId: string): ApiKeyRecord | undefined {
    return this.state.apiKeys.get(apiKeyId);
  }

  /** Every API key, in creation order. */
  apiKeys(): ApiKeyRecord[] {
    return [...this.state.apiKeys.values()];
  }

  hook(hookId: string): HookRecord | undefined {
    return this.state.hooks.get(hookId);
  }

  /** Every hook, in creation order; of one type when `type` is given. */
  hooks(type?: HookRecord['type']): HookRecord[] {
    const hooks = [...this.state.hooks.values()];
    return type === undefined ? hooks : hooks.filter((hook) => hook.type === type);
  }

  /** Hooks registered before hooks had signing secrets of their own. */
  hooksWithoutSecrets(): string[] {
    return hooksWithoutSecrets(this.state);
  }

  monitor(monitorId: string): MonitorRecord | undefined {
    return this.state.monitors.get(monitorId);
  }

  /** Every monitor, in creation order; of one balance when `balanceId` is given. */
  monitors(balanceId?: string): MonitorRecord[] {
    if (balanceId === undefined) return [...this.state.monitors.values()];
    const ids = this.state.monitorsByBalance.get(balanceId);
    if (!ids) return [];
    return [...this.state.monitors.values()].filter((monitor) => ids.has(monitor.monitor_id));
  }

  matchingRule(ruleId: string): MatchingRuleRecord | undefined {
    return this.state.matchingRules.get(ruleId);
  }

  matchingRules(): MatchingRuleRecord[] {
    return [...this.state.matchingRules.values()];
  }

  reconciliation(reconciliationId: string): ReconciliationRecord | undefined {
    return this.state.reconciliations.get(reconciliationId);
  }

  /** Every recorded reconciliation run, in start order. */
  reconciliations(): ReconciliationRecord[] {
    return [...this.state.reconciliations.values()];
  }

  upload(uploadId: string): UploadRecord | undefined {
    return this.state.uploads.get(uploadId);
  }

  /** Uploaded statements, newest first. */
  uploads(page: Page): UploadRecord[] {
    return newestFirst(this.state.uploads, page);
  }
}

/** A page of an insertion-ordered map's values, newest first. */
function newestFirst<T>(items: Map<string, T>, page: Page): T[] {
  const total = items.size;
  const start = Math.max(0, total - page.offset - page.limit);
  const end = Math.max(0, total - page.offset);
  const found: T[] = [];
  let index = 0;
  for (const value of items.values()) {
    if (index >= end) break;
    if (index >= start) found.push(value);
    index += 1;
  }
  return found.reverse();
}
