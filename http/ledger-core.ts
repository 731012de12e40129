// What the HTTP layer needs from a running ledger, as an interface: bin/ wires the real one (engine, LMDB
// log, lookup store, queue runner) and tests use that same wiring on a temp dir.

import type { LedgerEngine } from '../engine/ledger-engine.js';
import type { BalanceRecord, TransactionRecord } from '../engine/records.js';
import type { QueryPort } from './query-port.js';

export interface LedgerCore {
  readonly engine: LedgerEngine;
  /** Resolves once every event up to `seq` is on disk. */
  durable(seq: number): Promise<void>;
  /** The seq of the newest event the state reflects: what a read must wait for before answering. */
  visibleSeq(): number;
  /** Newest transactions first. */
  listTransactions(offset: number, limit: number): TransactionRecord[];
  /** The balance rebuilt by folding its postings from the whole log, or undefined if it never existed. */
  balanceFromSource(balanceId: string): BalanceRecord | undefined;
  /** Why new writes should be refused right now (the log or lookups are too far behind), if they should. */
  overloaded(): string | undefined;
  /** The query side (filter, search, balance history), when the index runs. */
  readonly query?: QueryPort;
}
