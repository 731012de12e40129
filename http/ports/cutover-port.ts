// The cutover contract between a ledger and the control plane that moves it onto a new process
// (docs/decisions-cloud.md): positions in the log, the answers of fence, unfence, status and promote, and
// the port the routes (routes/cutover-routes.ts) reach the ledger's cutover control through
// (cutover/cutover-control.ts). The cloud's client of those routes (cloud/core-client.ts) reads the same types.

import { refuse, type Result } from '../../engine/result.js';

/** Where a log stands: the seq of its last event and the checksum of the record that ends there. */
export interface CutoverPosition {
  seq: number;
  log_checksum: string;
}

/** A position as an answer, with where the time of the request went (for the control plane's report). */
export interface CutoverAnswer extends CutoverPosition {
  timings_ms?: Record<string, number>;
}

export interface CutoverStatus extends CutoverPosition {
  role: 'leader' | 'follower';
  fenced: boolean;
  appended_seq: number;
  durable_seq: number;
  /** Follower only: the last seq of the leader's log as last read. */
  leader_seq?: number;
  /** Follower only: why following stopped, if it did. */
  follow_error?: string;
  /** The query index's checkpoint (it may be rebuilt on a new process). */
  index_seq?: number;
  state_hash?: string;
  timings_ms?: Record<string, number>;
}

/** Why the control cannot carry out a request in the ledger's present role or state. */
export interface CutoverConflict {
  code: 'CUTOVER_CONFLICT';
  message: string;
}

/** What a cutover request answers: its value, or the conflict. */
export type CutoverResult<T> = Result<T, CutoverConflict>;

export function cutoverConflict(message: string): { ok: false; rejection: CutoverConflict } {
  return refuse({ code: 'CUTOVER_CONFLICT', message });
}

/**
 * A write admitted past the fence. In a worker the admission is decided on the engine's thread a moment
 * later, so the ticket says there whether this write was counted, and only a counted write is uncounted.
 */
export interface WriteTicket {
  readonly counted?: Promise<boolean>;
}

/** What the routes need from the ledger's cutover control (wired in cutover/cutover-control.ts). */
export interface CutoverPort {
  readonly fenced: boolean;
  /**
   * Counts a write in flight and answers its ticket, or undefined (nothing counted) when fenced. The
   * ticket goes back to `writeEnded` once the write's answer is written.
   */
  writeStarted(): WriteTicket | undefined | Promise<WriteTicket | undefined>;
  writeEnded(ticket: WriteTicket): void;
  /** Something that appends on its own schedule (API key last-use stamps) and must wait while fenced. */
  holdWhileFenced(writer: { hold(): void; release(): void }): void;
  fence(): Promise<CutoverResult<CutoverAnswer>>;
  unfence(): Promise<CutoverResult<CutoverAnswer>>;
  status(options: { atSeq?: number; waitMs: number; stateHash: boolean }): Promise<CutoverResult<CutoverStatus>>;
  promote(expected: CutoverPosition): Promise<CutoverResult<CutoverStatus>>;
}
