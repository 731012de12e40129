// What a failed lmdb-js commit says, and the one promise it leaves for its caller to handle. lmdb-js
// rejects the writes of a commit the disk refused with a generic "Commit failed (see commitError for
// details)" whose `commitError` is a promise, rejected right after with the disk's own error (ENOSPC,
// EIO, EFBIG). Nothing in lmdb-js handles that promise: a caller that leaves it alone leaves a rejection
// nobody handles, which ends a Node process with exit 1 (found by the 30-minute nemesis run of
// 2026-12-02 on a full disk), and reports the generic text instead of the cause. Here, beside the other
// process-wide helpers, because every adapter that writes LMDB needs it: the log, the transaction
// lookups and the hook outbox.

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
