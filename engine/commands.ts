// Commands: validated requests as the engine receives them. The HTTP edge has already checked shapes and
// converted amounts and times to exact values; everything left to judge needs the ledger's state.

import type { MetaData } from './records.js';
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
}

export interface InflightActionCommand {
  transaction_id: string;
  action: 'commit' | 'void';
  /** Commit amount; 0 means everything still held. Ignored for void. */
  precise_amount: bigint;
  skip_queue: boolean;
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
