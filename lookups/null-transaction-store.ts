// A TransactionStore that keeps nothing: for replicas of the working state (the snapshot worker,
// `folio verify`, restore) that apply events but never decide anything. applyEvent only writes to the
// store; lookups are the server's business, and its own store follows the log separately.

import type { TransactionStore } from '../engine/ports.js';
import type { MetaData, TransactionRecord } from '../engine/records.js';

export class NullTransactionStore implements TransactionStore {
  get(_transactionId: string): TransactionRecord | undefined {
    return undefined;
  }

  has(_transactionId: string): boolean {
    return false;
  }

  idForReference(_reference: string): string | undefined {
    return undefined;
  }

  put(_record: TransactionRecord): void {}

  patchMetaData(_transactionId: string, _patch: MetaData): void {}
}
