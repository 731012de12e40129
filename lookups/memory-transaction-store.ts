// A TransactionStore held entirely in memory: for unit tests, simulations and offline replays (verify,
// restore) where the whole history fits in memory and nothing needs to outlive the process.

import { assert } from '../engine/assert.js';
import { mergeMetaData } from '../engine/metadata.js';
import type { TransactionStore } from '../engine/ports.js';
import type { MetaData, TransactionRecord } from '../engine/records.js';

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

  patchMetaData(transactionId: string, patch: MetaData): void {
    const record = this.byId.get(transactionId);
    assert(record, `metadata patch for unknown transaction ${transactionId}`);
    // A patch changes metadata only: the reference stays with whichever transaction holds it now.
    this.byId.set(transactionId, { ...record, meta_data: mergeMetaData(record.meta_data, patch) });
  }
}
