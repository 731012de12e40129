// What a failed lmdb-js commit says, and the one promise it leaves for its caller to handle. lmdb-js
// rejects the writes of a commit the disk refused with a generic "Commit failed (see commitError for
// details)" whose `commitError` is a promise, rejected right after with the disk's own error (ENOSPC,
// EIO, EFBIG). Nothing in lmdb-js handles that promise: a caller that leaves it alone leaves a rejection
// nobody handles, which ends a Node process with exit 1 (found by the 30-minute nemesis run of
// 2026-12-02 on a full disk), and reports the generic text instead of the cause. Here, beside the other
// process-wide helpers, because every adapter that writes LMDB needs it: the log, the transaction
// lookups and the hook outbox.
//
// lmdb-js also starts each event turn's batch with a write of its own, whose promise it keeps nowhere
// (node_modules/lmdb/write.js, the batch start queued with the turn). When that commit fails, the promise
// is rejected with the same generic error and nobody can handle it: a server on a full disk then died
// with exit 1, or hung on its way out, instead of stopping with exit 70 (a server under `ulimit -f`,
// 2026-12-02). The stores' own writes in that commit fail with it and report the failure their way.

import { inspect } from 'node:util';

/** The disk's own error behind a failed commit (the error itself if lmdb-js gives none), with nothing left unhandled. */
export function commitFailureCause(error: unknown): Promise<Error> {
  const commitError = (error as { commitError?: unknown } | undefined)?.commitError;
  if (!(commitError instanceof Promise)) return Promise.resolve(error as Error);
  return new Promise((resolve) => {
    commitError.then(() => resolve(error as Error), (cause: unknown) => resolve(cause as Error));
    // lmdb-js settles it in the same turn as the failed commit; one that never settles tells nothing more.
    setImmediate(() => resolve(error as Error));
  });
}

/** lmdb-js's own text for the writes of a commit that failed. */
const COMMIT_FAILED = 'Commit failed (see commitError for details)';

let orphansHandled = false;

/**
 * Marks as handled, for this thread, the rejections only lmdb-js could have handled: a failed commit's
 * generic error carrying its `commitError` (itself handled here too). Every other rejection nobody
 * handles still ends the process as Node's default does, as an uncaught exception. Called by each store
 * that writes LMDB as it opens; once per thread.
 */
export function handleLmdbOrphanRejections(): void {
  if (orphansHandled) return;
  orphansHandled = true;
  process.on('unhandledRejection', (reason) => {
    if (reason instanceof Error && reason.message === COMMIT_FAILED && (reason as { commitError?: unknown }).commitError instanceof Promise) {
      void commitFailureCause(reason);
      return;
    }
    // As Node's default would: the error itself, or one that says what was rejected.
    throw reason instanceof Error ? reason : new Error(`a promise was rejected with ${inspect(reason)} and nothing handled it`);
  });
}
