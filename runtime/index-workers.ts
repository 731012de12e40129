// Where the query side's threads start: the modules of the projector's thread and of the balance
// history's follower, which join the index (or the history) and the log and so live in the application
// layer. Handed to the index (SecondaryIndexOptions) and the history thread by whoever opens them.

import { workerEntry } from '../threads/worker-entry.js';

export const INDEX_PROJECTOR_WORKER = workerEntry(import.meta.url, 'index-projector-worker');

export const HISTORY_WORKER = workerEntry(import.meta.url, 'history-worker');
