// What the main thread and the projector's thread say to each other (projector-thread.ts, and the
// thread's own module, app/index-projector-worker.ts).

import type { PoisonReport, ProjectorLimits } from './projector.js';
import type { RecordBatch } from './pushed-records.js';

export interface ProjectorWorkerSettings {
  walDir: string;
  indexFile: string;
  /** Build a fresh file from seq 1 (a rebuild) instead of tailing the live one. */
  build: boolean;
  durableSeq: number;
  limits?: Partial<ProjectorLimits>;
}

export type ToWorker = { type: 'durable'; seq: number; batch?: RecordBatch } | { type: 'finish'; minSeq: number } | { type: 'stop' };
export type FromWorker =
  | { type: 'ready'; checkpoint: number }
  | { type: 'batch'; checkpoint: number; rows: number; events: number; milliseconds: number }
  | { type: 'error'; message: string }
  | { type: 'poison'; poison: PoisonReport | undefined }
  | { type: 'stopped' }
  | { type: 'finished'; checkpoint: number }
  | { type: 'failed'; message: string };
