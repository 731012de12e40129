// Commands: validated requests as the engine receives them. The HTTP edge has already checked shapes and
// converted amounts and times to exact values; everything left to judge needs the ledger's state.

import type { MonitorFields } from './balance-monitors.js';
import type { ExchangeRequest } from './exchange.js';
import type { AllocationStrategy } from './fund-allocation.js';
import type { HookFields, NewApiKey } from './decide-registry.js';
import type { RunResults, StartReconciliationCommand, UploadCommand } from './decide-reconciliation.js';
import type { RuleCommand } from './matching-rules.js';
import type { Precondition } from './precondition.js';
import type { IdentityFields, IdentityRecord, MetaData } from './records.js';
import type { ShareRequest } from './split-distribution.js';

export interface CreateLedgerCommand {
  name: string;
  meta_data: MetaData;
}

export interface UpdateLedgerCommand {
  ledger_id: string;
  name?: string;
  meta_data?: MetaData;
}

export interface CreateBalanceCommand {
  ledger_id: string;
  currency: string;
  identity_id: string;
  indicator: string;
  meta_data: MetaData;
  /** Blnk's fund lineage (fund-lineage.ts): the balance follows its tagged funds; needs an identity. */
  track_fund_lineage?: boolean;
  /** How debits draw on tagged funds; FIFO when absent. Kept whether or not lineage is tracked, as in Blnk. */
  allocation_strategy?: AllocationStrategy;
}

/** One side's share of a split: who, and how much as requested. */
export interface ShareCommand {
  identifier: string;
  /** The share as the caller wrote it, echoed back. */
  distribution: string;
  request: ShareRequest;
}

export interface CreateTransactionCommand {
  /** A balance id, or `@name` for an internal balance created on first use; '' when `sources` is used. */
  source: string;
  /** Likewise; '' when `destinations` is used. */
  destination: string;
  sources?: ShareCommand[];
  destinations?: ShareCommand[];
  precise_amount: bigint;
  precision: bigint;
  currency: string;
  /** '' asks the engine to generate one. */
  reference: string;
  description: string;
  meta_data: MetaData;
  allow_overdraft: boolean;
  /**
   * Blnk's overdraft limit in the smallest unit (0n or absent: none). With a limit the source may go
   * down to minus the limit, with or without `allow_overdraft`; `allow_overdraft` without one has no floor.
   */
  overdraft_limit?: bigint;
  /** Decide and apply now instead of queueing behind the source balance's mailbox. */
  skip_queue: boolean;
  /** Reserve the amount until it is committed or voided. */
  inflight: boolean;
  /** Epoch ms, 0 for none. */
  inflight_expiry_date: number;
  inflight_commit_date: number;
  scheduled_for: number;
  /** Splits: all legs or none. */
  atomic: boolean;
  /** Epoch ms the transaction counts at for balance history; 0 or absent: when it is recorded. */
  effective_date?: number;
  /** What must hold when it is carried out (preconditions.ts); absent for none. */
  preconditions?: Precondition[];
  /** Answer with the balances it touched as it left them (resulting-balances.ts). */
  include_balances?: boolean;
  /** An exchange into another currency (exchange.ts); absent for a transaction in one currency. */
  exchange?: ExchangeRequest;
}

export interface InflightActionCommand {
  transaction_id: string;
  action: 'commit' | 'void';
  /** Commit amount; 0 means everything still held. Ignored for void. */
  precise_amount: bigint;
  skip_queue: boolean;
  /** What must hold when the commit or void is carried out (preconditions.ts); absent for none. */
  preconditions?: Precondition[];
  /** Answer with the balances it touched as it left them (resulting-balances.ts). */
  include_balances?: boolean;
}

export interface RefundCommand {
  transaction_id: string;
  skip_queue: boolean;
  /** '' copies the original's description. */
  description: string;
  /** Merged over the original's metadata. */
  meta_data: MetaData;
  /**
   * The refund's own overdraft terms (as CreateTransactionCommand's): it draws on the original's
   * destination, which the original's terms were never granted to, so none are inherited.
   */
  allow_overdraft?: boolean;
  overdraft_limit?: bigint;
}

export interface BulkCommand {
  transactions: CreateTransactionCommand[];
  atomic: boolean;
  inflight: boolean;
  skip_queue: boolean;
  /** Asked for as Blnk's asynchronous batch: its outcome is logged with it (events.ts BatchSummary). */
  run_async?: boolean;
  /** Answer with each recorded item and the balances it touched, as the batch left them (resulting-balances.ts). */
  include_balances?: boolean;
}

/** A transfer command with everything not given at its plain default (for callers inside the process). */
export function transferCommand(
  fields: Pick<CreateTransactionCommand, 'source' | 'destination' | 'precise_amount' | 'currency'> & Partial<CreateTransactionCommand>,
): CreateTransactionCommand {
  return {
    precision: 1n,
    reference: '',
    description: '',
    meta_data: {},
    allow_overdraft: false,
    skip_queue: false,
    inflight: false,
    inflight_expiry_date: 0,
    inflight_commit_date: 0,
    scheduled_for: 0,
    atomic: false,
    ...fields,
  };
}

/** Commits or voids every open hold one bulk request made (its batch id in place of a hold's id). */
export interface BatchHoldActionCommand {
  batch_id: string;
  action: 'commit' | 'void';
  skip_queue: boolean;
  /** What must hold when each hold's action is carried out (preconditions.ts); absent for none. */
  preconditions?: Precondition[];
  /** Answer with the balances of every hold acted on as the action left them (resulting-balances.ts). */
  include_balances?: boolean;
}

/** Up to BULK_HOLD_ACTIONS_MAX holds, each committed or voided on its own, all decided in one event. */
export interface ManyHoldActionsCommand {
  action: 'commit' | 'void';
  /**
   * Commit amounts in each hold's smallest unit; 0 means everything still held. `preconditions`: what
   * must hold when that hold's action is carried out (preconditions.ts), judged as a single hold's are.
   */
  items: Array<{ transaction_id: string; precise_amount: bigint; preconditions?: Precondition[] }>;
  skip_queue: boolean;
  /** Answer each hold acted on with its balances as the whole action left them (resulting-balances.ts). */
  include_balances?: boolean;
}

/**
 * Every write the engine takes, as one closed union keyed by `op`: the HTTP edge, the queue and timer
 * runners, reconciliation and the API key usage flusher all send these to `LedgerEngine.run`, and
 * operations.ts has exactly one operation per `op` (the compiler checks it). A command is plain data
 * (strings, numbers, booleans, bigints, arrays and objects of them) so it can cross a thread boundary.
 */
export type Command =
  | { op: 'genesis.ensure' }
  | ({ op: 'ledger.create' } & CreateLedgerCommand)
  | ({ op: 'ledger.update' } & UpdateLedgerCommand)
  /** Closes the ledger's books through `closes_at` (epoch ms): engine/closed-periods.ts. */
  | { op: 'period.close'; ledger_id: string; closes_at: number }
  | ({ op: 'balance.create' } & CreateBalanceCommand)
  | { op: 'balance.set_identity'; balance_id: string; identity_id: string }
  | ({ op: 'transaction.create' } & CreateTransactionCommand)
  | ({ op: 'transaction.bulk' } & BulkCommand)
  | ({ op: 'transaction.refund' } & RefundCommand)
  | ({ op: 'hold.act' } & InflightActionCommand)
  | ({ op: 'hold.act_on_batch' } & BatchHoldActionCommand)
  | ({ op: 'hold.act_on_many' } & ManyHoldActionsCommand)
  | { op: 'queue.process'; items_max: number }
  | { op: 'queue.recover'; cutoff: number }
  | { op: 'timers.fire' }
  | {
    op: 'identity.create';
    fields: IdentityFields;
    /** The id the caller chose (Blnk's `identity_id`, shape checked at the edge); absent: one is generated. */
    identity_id?: string;
  }
  | {
    op: 'identity.update';
    identity_id: string;
    fields: IdentityFields;
    /** Refuse (GEN_CONFLICT) unless the identity is still this record: a read-modify-write from the edge. */
    expected?: IdentityRecord;
  }
  | { op: 'identity.delete'; identity_id: string }
  | { op: 'metadata.update'; entity_id: string; meta_data: MetaData }
  | { op: 'api_key.create'; fields: NewApiKey }
  | { op: 'api_key.revoke'; api_key_id: string }
  | { op: 'api_key.record_use'; used_at: Array<[api_key_id: string, at: number]> }
  /**
   * Failures of the server's own work after it was acknowledged (a hook given up, the index stuck on an
   * event), logged so the notification webhook announces each as Blnk's system.error once durable.
   */
  | { op: 'system.record_errors'; messages: string[] }
  | { op: 'hook.create'; fields: HookFields; signing_secret_sealed: string }
  | { op: 'hook.update'; hook_id: string; fields: HookFields }
  | { op: 'hook.rotate_secret'; hook_id: string; signing_secret_sealed: string }
  | { op: 'hook.delete'; hook_id: string }
  /** Hooks from before per-hook secrets: each given the sealed secret made for it (hook id, sealed). */
  | { op: 'hook.issue_secrets'; sealed_by_hook_id: Array<[hook_id: string, sealed: string]> }
  | { op: 'monitor.create'; fields: MonitorFields }
  | { op: 'monitor.update'; monitor_id: string; fields: MonitorFields }
  | { op: 'monitor.delete'; monitor_id: string }
  | { op: 'matching_rule.create'; rule: RuleCommand }
  | { op: 'matching_rule.update'; rule_id: string; rule: RuleCommand }
  | { op: 'matching_rule.delete'; rule_id: string }
  | { op: 'reconciliation.upload'; upload: UploadCommand }
  | ({ op: 'reconciliation.start' } & StartReconciliationCommand)
  | { op: 'reconciliation.progress'; reconciliation_id: string; processed: number }
  | { op: 'reconciliation.resume'; reconciliation_id: string }
  | { op: 'reconciliation.fail'; reconciliation_id: string; reason: string }
  | { op: 'reconciliation.complete'; reconciliation_id: string; results: RunResults };

export type CommandOp = Command['op'];

/** The command of one op. */
export type CommandOf<K extends CommandOp> = Extract<Command, { op: K }>;
