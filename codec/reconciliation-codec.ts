// The bulky parts of reconciliation events as bytes: chunks of external records (an upload) and chunks
// of a run's results. Each holds up to a thousand rows, so they get a fixed layout written field by
// field instead of msgpack, which would repeat every key in every row:
//
//   external records  upload id, u32 first position, u32 count, then per record: id, amount, precision,
//                     currency, reference (u16 length + UTF-8 each), description (u32 length + UTF-8),
//                     f64 date
//   results           reconciliation id, u32 match count, per match: u32 position, external id, u16
//                     count + internal ids, rule id, amount difference, difference precision, f64 time
//                     difference; u32 unmatched count, per record: u32 position, external id, u8 reason
//
// Every field of the records is named in a table with `satisfies`, so a new field is a compile error
// here until it is written.

import {
  UNMATCHED_REASONS,
  type ExternalRecord,
  type ExternalRecordsChunk,
  type ReconciliationMatch,
  type ReconciliationResultsChunk,
  type UnmatchedExternal,
  type UnmatchedReason,
} from '../engine/reconciliation-records.js';
import { readAmount, writeAmount } from './balance-codec.js';
import type { ByteReader, ByteWriter } from './byte-writer.js';

/** The fields each layout below writes: adding one to a record fails to compile until it is placed. */
export const RECONCILIATION_FIELDS = {
  externalRecord: {
    id: 'written', amount: 'written', precision: 'written', currency: 'written', reference: 'written', description: 'written', date: 'written',
  } satisfies Record<keyof ExternalRecord, 'written'>,
  chunk: { upload_id: 'written', first_position: 'written', records: 'written' } satisfies Record<keyof ExternalRecordsChunk, 'written'>,
  match: {
    position: 'written', external_id: 'written', internal_ids: 'written', rule_id: 'written', amount_difference: 'written',
    difference_precision: 'written', time_difference_ms: 'written',
  } satisfies Record<keyof ReconciliationMatch, 'written'>,
  unmatched: { position: 'written', external_id: 'written', reason: 'written' } satisfies Record<keyof UnmatchedExternal, 'written'>,
  results: { reconciliation_id: 'written', matches: 'written', unmatched: 'written' } satisfies Record<keyof ReconciliationResultsChunk, 'written'>,
} as const;

const REASON_CODE = new Map<UnmatchedReason, number>(UNMATCHED_REASONS.map((reason, index) => [reason, index]));

export function writeExternalRecordChunks(out: ByteWriter, chunks: ExternalRecordsChunk[]): void {
  out.u32(chunks.length);
  for (const chunk of chunks) {
    out.shortString(chunk.upload_id);
    out.u32(chunk.first_position);
    out.u32(chunk.records.length);
    for (const record of chunk.records) {
      out.shortString(record.id);
      writeAmount(out, record.amount);
      writeAmount(out, record.precision);
      out.shortString(record.currency);
      out.shortString(record.reference);
      out.longString(record.description);
      out.f64(record.date);
    }
  }
}

export function readExternalRecordChunks(input: ByteReader): ExternalRecordsChunk[] {
  const chunks: ExternalRecordsChunk[] = new Array(input.u32());
  for (let chunkIndex = 0; chunkIndex < chunks.length; chunkIndex += 1) {
    const uploadId = input.shortString();
    const firstPosition = input.u32();
    const records: ExternalRecord[] = new Array(input.u32());
    for (let index = 0; index < records.length; index += 1) {
      records[index] = {
        id: input.shortString(),
        amount: readAmount(input),
        precision: readAmount(input),
        currency: input.shortString(),
        reference: input.shortString(),
        description: input.longString(),
        date: input.f64(),
      };
    }
    chunks[chunkIndex] = { upload_id: uploadId, first_position: firstPosition, records };
  }
  return chunks;
}

export function writeResultChunks(out: ByteWriter, chunks: ReconciliationResultsChunk[]): void {
  out.u32(chunks.length);
  for (const chunk of chunks) {
    out.shortString(chunk.reconciliation_id);
    out.u32(chunk.matches.length);
    for (const match of chunk.matches) {
      out.u32(match.position);
      out.shortString(match.external_id);
      out.u16(match.internal_ids.length);
      for (const internalId of match.internal_ids) out.shortString(internalId);
      out.shortString(match.rule_id);
      writeAmount(out, match.amount_difference);
      writeAmount(out, match.difference_precision);
      out.f64(match.time_difference_ms);
    }
    out.u32(chunk.unmatched.length);
    for (const record of chunk.unmatched) {
      out.u32(record.position);
      out.shortString(record.external_id);
      out.u8(REASON_CODE.get(record.reason) as number);
    }
  }
}

export function readResultChunks(input: ByteReader): ReconciliationResultsChunk[] {
  const chunks: ReconciliationResultsChunk[] = new Array(input.u32());
  for (let chunkIndex = 0; chunkIndex < chunks.length; chunkIndex += 1) {
    const reconciliationId = input.shortString();
    const matches: ReconciliationMatch[] = new Array(input.u32());
    for (let index = 0; index < matches.length; index += 1) {
      const position = input.u32();
      const externalId = input.shortString();
      const internalIds: string[] = new Array(input.u16());
      for (let member = 0; member < internalIds.length; member += 1) internalIds[member] = input.shortString();
      matches[index] = {
        position,
        external_id: externalId,
        internal_ids: internalIds,
        rule_id: input.shortString(),
        amount_difference: readAmount(input),
        difference_precision: readAmount(input),
        time_difference_ms: input.f64(),
      };
    }
    const unmatched: UnmatchedExternal[] = new Array(input.u32());
    for (let index = 0; index < unmatched.length; index += 1) {
      const position = input.u32();
      const externalId = input.shortString();
      const reason = UNMATCHED_REASONS[input.u8()];
      if (reason === undefined) throw new Error('unknown unmatched reason code');
      unmatched[index] = { position, external_id: externalId, reason };
    }
    chunks[chunkIndex] = { reconciliation_id: reconciliationId, matches, unmatched };
  }
  return chunks;
}
