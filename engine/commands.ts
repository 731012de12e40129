// Commands: validated requests as the engine receives them. The HTTP edge has already checked shapes and
// converted amounts to exact bigints; everything left to judge needs the ledger's state.

import type { MetaData } from './records.js';

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

export interface CreateTransactionCommand {
  /** A balance id, or `@name` for an internal balance created on first use. */
  source: string;
  destination: string;
  precise_amount: bigint;
  precision: bigint;
  currency: string;
  /** '' asks the engine to generate one. */
  reference: string;
  description: string;
  meta_data: MetaData;
  allow_overdraft: boolean;
  /** Decide and apply now instead of queueing behind the source balance's mailbox. */
  skip_queue: boolean;
}
