// The transaction lookups (lookups/lmdb-transaction-store.ts) when a batch cannot be committed, with real
// LMDB on a real failing write: a child process runs the store under a file-size limit (`ulimit -f`;
// Node ignores SIGXFSZ, so a write past the limit fails with EFBIG, as a full disk fails one with
// ENOSPC) and puts transactions until the limit is reached. The failure must be reported once, through
// the store's handler (the server's stops the process with exit 70 and the next start catches the
// lookups up from the log), and never as an unhandled rejection: before, a failed commit rejected the
// promises of puts nobody awaited, and the process died with exit 1 (the 30-minute nemesis run of
// 2026-12-02, on a full disk). What was put stays readable from memory.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDataDir } from './helpers/test-server.js';

const STORE = fileURLToPath(new URL('../dist/lookups/lmdb-transaction-store.js', import.meta.url));
const LOG = fileURLToPath(new URL('../dist/wal/lmdb-log.js', import.meta.url));
/** The child's file-size limit, in bash's 1,024-byte blocks. */
const FILE_KIB_MAX = 2_048;

const CHILD = `
import path from 'node:path';
const { LmdbTransactionStore } = await import(${JSON.stringify(STORE)});
const { LmdbLog } = await import(${JSON.stringify(LOG)});
const dir = process.argv[1];
const log = LmdbLog.open({ dir: path.join(dir, 'log') });
const failures = [];
const store = LmdbTransactionStore.open(path.join(dir, 'lookup'), log, (error) => failures.push(error.message));
let last = '';
for (let seq = 1; seq <= 400_000 && failures.length === 0; seq += 1) {
  last = 'txn_' + String(seq).padStart(12, '0');
  store.put({ transaction_id: last, reference: 'ref-' + seq + '-' + 'x'.repeat(40), meta_data: {} });
  store.sealed(seq);
  if (seq % 1_000 === 0) {
    store.logDurable(seq);
    // Each thousand is committed (or refused) before the next is put, so the first batches land before
    // the limit whatever the machine's speed.
    while (store.checkpoint < seq && failures.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
await new Promise((resolve) => setTimeout(resolve, 500));
console.log(JSON.stringify({ failures, readable: store.get(last)?.transaction_id === last, checkpoint: store.checkpoint }));
`;

t.test('a lookups batch the disk refuses is reported once through the handler, nothing rejected unhandled', async (t) => {
  const dir = tempDataDir('folio-lookups-fail');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = spawnSync('bash', ['-c', `ulimit -f ${FILE_KIB_MAX} && exec "$0" --input-type=module -e "$1" "$2"`, process.execPath, CHILD, dir], {
    encoding: 'utf8', timeout: 120_000,
  });
  t.equal(run.status, 0, `the child ends normally, with no unhandled rejection (signal ${run.signal}); stderr:\n${run.stderr.slice(-2_000)}`);
  const report = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { failures?: string[]; readable?: boolean; checkpoint?: number };
  t.equal(report.failures?.length, 1, `one failure reported: ${JSON.stringify(report.failures)}`);
  t.match(report.failures?.[0] ?? '', /^transaction lookups could not be written: /, 'saying what could not be written');
  t.ok(report.readable, 'the last transaction put is still readable (from memory)');
  t.ok((report.checkpoint ?? 0) > 0, `the batches before the failure were written (checkpoint ${report.checkpoint})`);
});
