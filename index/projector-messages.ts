// What the main thread and the projector's thread say to each other (projector-thread.ts, and the
// thread's own module, runtime/index-projector-worker.ts).

import type { BatchReport, PoisonReport, ProjectorLimits } from './projector.js';
import type { RecordBatch } from './pushed-records.js';

export interface ProjectorWorkerSettings {
  walDir: string;
  indexFile: string;
  /** Build a fresh file from seq 1 (a rebuild) instead of tailing the live one. */
  build: boolean;
  durableSeq: number;
  limits?: Partial<ProjectorLimits>;
}

/** `text`: someone waits for the full-text indexes, which take the next turn (Projector.wantText). */
export type ToWorker = { type: 'durable'; seq: number; batch?: RecordBatch } | { type: 'text' } | { type: 'finish'; minSeq: number } | { type: 'stop' };
export type FromWorker =
  | { type: 'ready'; checkpoint: number; text_checkpoint: number }
  | ({ type: 'batch' } & BatchReport)
  | { type: 'error'; message: string }
  | { type: 'poison'; poison: PoisonReport | undefined }
  | { type: 'stopped' }
  | { type: 'finished'; checkpoint: number }
  | { type: 'failed'; message: string };
