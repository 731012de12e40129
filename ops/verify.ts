// `folio verify`: proves a data directory is intact by replaying it from genesis, read-only. It checks
//   - every log record's checksum and the chain of prev_checksum links (the first broken record is named),
//   - every transaction row's hash against its core fields (engine/transaction-hash.ts),
//   - every invariant applyEvent checks while replaying (each event nets to zero per currency, ...),
//   - every snapshot: whole, tied to this log, and equal to the replayed state at its seq (by state
//     hash, both of the replay and of the snapshot's own contents),
//   - every closed period: its close is the first event of a log record whose chain link is the
//     `sealed_hash` it names, right after `sealed_seq`; and no later event moves a balance of its ledger
//     at a time (a posting's effective time, else its event's) at or before its `closes_at`,
//   - the zero-sum invariant at the end: per currency, settled and inflight amounts each sum to zero.
// It can run beside a live server: LMDB readers do not disturb the writer, and the log is read up to
// its end as of the start.

import { InvariantViolation } from '../engine/assert.js';
import type { LedgerEvent } from '../engine/events.js';
import { applyEvent, LedgerState } from '../engine/ledger-state.js';
import { transactionHash } from '../engine/transaction-hash.js';
import { CorruptRecordError, type DecodedLogRecord } from '../wal/log-record-codec.js';
import { LogReader } from '../wal/log-reader.js';
import { NullTransactionStore } from '../lookups/null-transaction-store.js';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { readHeader, readSnapshot, SnapshotFileError, type SnapshotHeader } from '../snapshots/snapshot-file.js';
import { stateHash } from '../snapshots/state-hash.js';
import { restoreState } from '../snapshots/state-restore.js';

export type FaultKind = 'log' | 'row-hash' | 'invariant' | 'snapshot' | 'zero-sum' | 'period';

export interface VerifyFault {
  kind: FaultKind;
  message: string;
  /** Key of the log record at fault (its first seq). */
  record?: number;
  seq?: number;
  file?: string;
}

export interface SnapshotCheck {
  file: string;
  seq: number;
  ok: boolean;
  message: string;
}

export interface CurrencyTotal {
  currency: string;
  settled: bigint;
  inflight: bigint;
}

export interface VerifyReport {
  ok: boolean;
  /** Seq of the last event replayed. */
  endSeq: number;
  records: number;
  events: number;
  transactionRows: number;
  snapshots: SnapshotCheck[];
  totals: CurrencyTotal[];
  /** Faults found, the first one first; a broken log record ends the replay, so it is always last. */
  faults: VerifyFault[];
  /** Hash of the replayed state at endSeq. */
  stateHash: string;
  milliseconds: number;
}

export interface VerifyOptions {
  dataDir: string;
  /** Called after every record with the seq reached and the log's last seq (0 if unknown). */
  onProgress?(seq: number, endSeq: number): void;
  /** Row-hash faults listed individually before the rest are only counted. */
  rowFaultsListed?: number;
}

interface PendingSnapshot {
  file: string;
  header: SnapshotHeader;
}

export function verifyDataDir(options: VerifyOptions): VerifyReport {
  const started = performance.now();
  const reader = LogReader.open(options.dataDir);
  try {
    return new Verification(reader, options).run(started);
  } finally {
    void reader.close();
  }
}

class Verification {
  private readonly state = new LedgerState(new NullTransactionStore());
  private readonly faults: VerifyFault[] = [];
  private readonly checks: SnapshotCheck[] = [];
  private pending: PendingSnapshot[] = [];
  private rowFaults = 0;
  private records = 0;
  private events = 0;
  private rows = 0;
  private seq = 0;

  constructor(private readonly reader: LogReader, private readonly options: VerifyOptions) {}

  run(started: number): VerifyReport {
    const endSeq = this.logEnd();
    this.pending = this.readSnapshotHeaders();
    this.replay(endSeq);
    for (const left of this.pending) {
      this.snapshotFault(left.file, left.header.seq, `is at seq ${left.header.seq}, past the last replayed seq ${this.seq}`);
    }
    const rowsUnlisted = this.rowFaults - Math.min(this.rowFaults, this.options.rowFaultsListed ?? 10);
    if (rowsUnlisted > 0) this.faults.push({ kind: 'row-hash', message: `${rowsUnlisted} more transaction rows with a wrong hash` });
    const totals = this.zeroSum();
    return {
      ok: this.faults.length === 0,
      endSeq: this.seq,
      records: this.records,
      events: this.events,
      transactionRows: this.rows,
      snapshots: this.checks,
      totals,
      faults: this.faults,
      stateHash: stateHash(this.state),
      milliseconds: performance.now() - started,
    };
  }

  private logEnd(): number {
    try {
      return this.reader.endSeq();
    } catch (error) {
      if (error instanceof CorruptRecordError) return 0; // the replay meets it and reports it in order
      throw error;
    }
  }

  private readSnapshotHeaders(): PendingSnapshot[] {
    const found: PendingSnapshot[] = [];
    for (const entry of listSnapshots(snapshotDirectoryIn(this.options.dataDir))) {
      try {
        const header = readHeader(entry.file);
        if (header.seq !== entry.seq) this.snapshotFault(entry.file, entry.seq, `is named for seq ${entry.seq} but holds seq ${header.seq}`);
        else found.push({ file: entry.file, header });
      } catch (error) {
        if (!(error instanceof SnapshotFileError)) throw error;
        this.snapshotFault(entry.file, entry.seq, `is ${error.fault}: ${error.detail}`);
      }
    }
    return found.sort((a, b) => a.header.seq - b.header.seq);
  }

  private replay(endSeq: number): void {
    try {
      for (const logRecord of this.reader.logRecords()) {
        if (!this.apply(logRecord)) return;
        this.records += 1;
        this.checkSnapshotsAt(logRecord);
        this.options.onProgress?.(this.seq, Math.max(endSeq, this.seq));
      }
    } catch (error) {
      if (!(error instanceof CorruptRecordError)) throw error;
      this.faults.push({ kind: 'log', record: error.recordKey, message: error.message });
    }
  }

  /** Applies one record's events; false when an invariant broke (replay cannot go on). */
  private apply(logRecord: DecodedLogRecord): boolean {
    for (let index = 0; index < logRecord.events.length; index += 1) {
      const seq = logRecord.first_seq + index;
      const event = logRecord.events[index] as LedgerEvent;
      this.checkRowHashes(logRecord.first_seq, seq, event);
      if (event.periods) this.checkSeals(logRecord, seq, event);
      if (this.state.periods.size > 0) this.checkClosedPeriods(logRecord.first_seq, seq, event);
      try {
        applyEvent(this.state, event, { owned: true });
      } catch (error) {
        if (!(error instanceof InvariantViolation)) throw error;
        this.faults.push({ kind: 'invariant', record: logRecord.first_seq, seq, message: `log record ${logRecord.first_seq}, seq ${seq}: ${error.message}` });
        return false;
      }
      this.seq = seq;
      this.events += 1;
    }
    return true;
  }

  private checkRowHashes(record: number, seq: number, event: LedgerEvent): void {
    for (const row of event.transactions ?? []) {
      this.rows += 1;
      if (transactionHash(row) === row.hash) continue;
      this.rowFaults += 1;
      if (this.rowFaults <= (this.options.rowFaultsListed ?? 10)) {
        this.faults.push({ kind: 'row-hash', record, seq, message: `log record ${record}, seq ${seq}: transaction ${row.transaction_id} has a hash that does not match its fields` });
      }
    }
  }

  /** A close seals the chain right before its own record: it is that record's first event, linked to `sealed_hash`. */
  private checkSeals(logRecord: DecodedLogRecord, seq: number, event: LedgerEvent): void {
    for (const period of event.periods ?? []) {
      const sealed = seq === logRecord.first_seq && period.sealed_seq === seq - 1 && period.sealed_hash === logRecord.prev_checksum.toString('hex');
      if (sealed) continue;
      this.faults.push({
        kind: 'period', record: logRecord.first_seq, seq,
        message: `log record ${logRecord.first_seq}, seq ${seq}: period ${period.period_id} names seq ${period.sealed_seq} and hash ${period.sealed_hash}, which is not where the chain stood before it`,
      });
    }
  }

  /** Nothing after a close moves a balance of its ledger at or before the moment it closed through. */
  private checkClosedPeriods(record: number, seq: number, event: LedgerEvent): void {
    for (const posting of event.postings ?? []) {
      const balance = this.state.balances.get(posting.balance_id) ?? event.balances?.find((created) => created.balance_id === posting.balance_id);
      if (!balance) continue; // applyEvent's own checks refuse it
      const through = this.state.periods.closedThrough(balance.ledger_id);
      const at = posting.effective_at ?? event.at;
      if (at > through) continue;
      this.faults.push({
        kind: 'period', record, seq,
        message: `log record ${record}, seq ${seq}: a posting to balance ${posting.balance_id} counts at ${new Date(at).toISOString()}, inside ledger ${balance.ledger_id}'s closed period (through ${new Date(through).toISOString()})`,
      });
      return;
    }
  }

  private checkSnapshotsAt(logRecord: DecodedLogRecord): void {
    while (this.pending.length > 0 && (this.pending[0] as PendingSnapshot).header.seq <= logRecord.last_seq) {
      const { file, header } = this.pending.shift() as PendingSnapshot;
      if (header.seq !== logRecord.last_seq) {
        this.snapshotFault(file, header.seq, `is at seq ${header.seq}, inside log record ${logRecord.first_seq} rather than at its end`);
        continue;
      }
      const problem = this.compare(file, header, logRecord);
      if (problem) this.snapshotFault(file, header.seq, problem);
      else this.checks.push({ file, seq: header.seq, ok: true, message: 'matches the replayed state' });
    }
  }

  private compare(file: string, header: SnapshotHeader, logRecord: DecodedLogRecord): string | undefined {
    if (header.log_record_key !== logRecord.first_seq || header.log_checksum !== logRecord.checksum.toString('hex')) {
      return `was taken from another history (log record ${logRecord.first_seq} differs)`;
    }
    const replayed = stateHash(this.state);
    if (replayed !== header.state_hash) return `records state hash ${header.state_hash}, the replay gives ${replayed}`;
    let restored: LedgerState;
    try {
      restored = new LedgerState(new NullTransactionStore());
      restoreState(restored, readSnapshot(file));
    } catch (error) {
      if (error instanceof SnapshotFileError) return `is ${error.fault}: ${error.detail}`;
      return `cannot be loaded: ${(error as Error).message}`;
    }
    const contents = stateHash(restored);
    if (contents !== header.state_hash) return `holds a state hashing to ${contents}, not the ${header.state_hash} its header records`;
    return undefined;
  }

  private snapshotFault(file: string, seq: number, detail: string): void {
    const message = `snapshot ${file} ${detail}`;
    this.checks.push({ file, seq, ok: false, message });
    this.faults.push({ kind: 'snapshot', file, seq, message });
  }

  private zeroSum(): CurrencyTotal[] {
    const totals = new Map<string, CurrencyTotal>();
    for (const balance of this.state.balances.values()) {
      let total = totals.get(balance.currency);
      if (!total) totals.set(balance.currency, (total = { currency: balance.currency, settled: 0n, inflight: 0n }));
      total.settled += balance.credit_balance - balance.debit_balance;
      total.inflight += balance.inflight_credit_balance - balance.inflight_debit_balance;
    }
    const sorted = [...totals.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1));
    for (const total of sorted) {
      if (total.settled === 0n && total.inflight === 0n) continue;
      this.faults.push({ kind: 'zero-sum', message: `${total.currency} does not sum to zero: settled ${total.settled}, inflight ${total.inflight}` });
    }
    return sorted;
  }
}
