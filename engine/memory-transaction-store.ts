// A TransactionStore held entirely in memory: for unit tests, simulations and offline replays (verify,
// restore) where the whole history fits in memory and nothing needs to outlive the process.

import type { TransactionStore } from './ports.js';
import type { TransactionRecord } from './records.js';

export class MemoryTransactionStore implements TransactionStore {
  readonly byId = new Map<string, TransactionRecord>();
  private readonly idByReference = new Map<string, string>();

  get(transactionId: string): TransactionRecord | undefined {
    return this.byId.get(transactionId);
  }

  idForReference(reference: string): string | undefined {
    return this.idByReference.get(reference);
  }

  put(record: TransactionRecord): void {
    this.byId.set(record.transaction_id, record);
    this.idByReference.set(record.reference, record.transaction_id);
  }
}
