// Where the index's threads start: the module of the projector's thread, which joins the index and the
// log and so lives in the application layer. Handed to the index (SecondaryIndexOptions) by whoever
// opens it.

import { workerEntry } from '../threads/worker-entry.js';

export const INDEX_PROJECTOR_WORKER = workerEntry(import.meta.url, 'index-projector-worker');
