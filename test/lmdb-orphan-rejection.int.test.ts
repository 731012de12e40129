// What a failed LMDB commit leaves for the process (threads/lmdb-commit-failure.ts). lmdb-js starts each
// event turn's batch with a write whose promise it keeps nowhere; when the commit fails, that promise is
// rejected with nobody to handle it. A server run under `ulimit -f` (2026-12-02) then died with exit 1, or
// hung on its way out, instead of stopping with exit 70; a promise-creation trace named lmdb's own batch
// start as the promise's origin. The same runs against the log alone (a child appending under the limit)
// could not be kept as a test: one run in about twelve ended in a heap corruption inside lmdb-js itself
// ("corrupted size vs. prev_size", SIGABRT), whatever Folio does, so the handler is checked here on the
// rejection as lmdb-js shapes it.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const HELPERS = fileURLToPath(new URL('../dist/threads/lmdb-commit-failure.js', import.meta.url));

// The rejection lmdb-js leaves behind, shaped as lmdb-js shapes it (its generic error, its commitError
// settled later), beside an ordinary one: the first is handled, the second still ends the process.
const ORPHAN_CHILD = `
const { handleLmdbOrphanRejections } = await import(${JSON.stringify(HELPERS)});
handleLmdbOrphanRejections();
let rejectCause;
const orphan = new Error('Commit failed (see commitError for details)');
orphan.commitError = new Promise((_, reject) => { rejectCause = reject; });
void Promise.reject(orphan);
setTimeout(() => rejectCause(new Error('EIO')), 20);
setTimeout(() => {
  console.log('past the orphan');
  void Promise.reject(new Error('an ordinary rejection'));
}, 100);
setTimeout(() => console.log('past the ordinary rejection'), 500);
`;

t.test("lmdb-js's own failed-commit promise is handled; any other unhandled rejection still ends the process", async (t) => {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', ORPHAN_CHILD], { encoding: 'utf8', timeout: 30_000 });
  t.match(child.stdout, /past the orphan/, 'the orphaned commit failure did not end the process');
  t.notMatch(child.stdout, /past the ordinary rejection/, 'an ordinary unhandled rejection did');
  t.equal(child.status, 1, 'with exit 1, as Node ends on an uncaught exception');
  t.match(child.stderr, /an ordinary rejection/, 'and says what was rejected');
});
