// What a reconciliation run reads, from the SQLite query index: candidates through its indexes and an
// upload's records (index/reconciliation-queries.ts). Every read first waits for the index to hold the
// log up to the run's seq; an index that cannot catch up in time fails the run with the reason.

import { RECONCILIATION_CHUNK_ROWS_MAX, type ExternalRecord } from '../engine/reconciliation-records.js';
import {
  appliedCount,
  bandSizes,
  candidatesByFoldedText,
  candidatesContaining,
  candidatesWithin,
  scanApplied,
  candidatesByAmount,
  candidatesByDate,
  candidatesByReference,
  externalRecords,
  groupMembers,
  precisionsOf,
} from '../index/reconciliation-queries.js';
import type { SecondaryIndex } from '../index/secondary-index.js';
import type { SqliteConnection } from '../index/sqlite-connection.js';
import type { CandidateSource } from '../reconciliation/candidate-source.js';
import type { RunReads } from '../reconciliation/reconciliation-runner.js';

export function indexRunReads(index: SecondaryIndex): RunReads {
  const read = async <T>(seq: number, waitMs: number, work: (reader: SqliteConnection) => Promise<T>): Promise<T> => {
    const answer = await index.reconciliationRead(seq, waitMs, work);
    if (!answer.ok) throw new Error(`the query index could not answer: ${answer.rejection.message}`);
    return answer.value;
  };
  return {
    candidates(asOf, waitMs): CandidateSource {
      return {
        byReference: (probes, rowsMax) => read(asOf, waitMs, (reader) => candidatesByReference(reader, probes, rowsMax)),
        byAmount: (probes, rowsMax, through) => read(asOf, waitMs, (reader) => candidatesByAmount(reader, probes, rowsMax, through)),
        bandSizes: (probes, cap) => read(asOf, waitMs, (reader) => bandSizes(reader, probes, cap)),
        byDate: (probes, rowsMax) => read(asOf, waitMs, (reader) => candidatesByDate(reader, probes, rowsMax)),
        groupMembers: (field, keys, membersMax) => read(asOf, waitMs, (reader) => groupMembers(reader, field, keys, membersMax)),
        precisions: (currency) => read(asOf, waitMs, (reader) => precisionsOf(reader, currency)),
        byTextContaining: (field, probes, rowsMax, shortScanRowsMax) => read(asOf, waitMs, (reader) => candidatesContaining(reader, field, probes, rowsMax, shortScanRowsMax)),
        byTextWithin: (field, probes, rowsMax, stepsBudget) => read(asOf, waitMs, (reader) => candidatesWithin(reader, field, probes, rowsMax, stepsBudget)),
        byFoldedText: (field, probes, rowsMax) => read(asOf, waitMs, (reader) => candidatesByFoldedText(reader, field, probes, rowsMax)),
        scanApplied: (after, limit) => read(asOf, waitMs, (reader) => scanApplied(reader, after, limit)),
        appliedCount: () => read(asOf, waitMs, (reader) => appliedCount(reader)),
      };
    },
    async uploadRecords(asOf, waitMs, uploadId, count): Promise<ExternalRecord[]> {
      const records: ExternalRecord[] = [];
      while (records.length < count) {
        const page = await read(asOf, waitMs, (reader) => externalRecords(reader, uploadId, records.length, RECONCILIATION_CHUNK_ROWS_MAX));
        if (page.length === 0) throw new Error(`upload ${uploadId} has ${records.length} of its ${count} records in the query index`);
        for (const row of page) {
          records.push({
            id: row.id, amount: row.amount, precision: row.precision, currency: row.currency, reference: row.reference,
            description: row.description, date: row.date,
          });
        }
      }
      return records;
    },
  };
}
