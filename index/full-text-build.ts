// Builds the full-text indexes of a file being rebuilt, in a child process, while the rebuilding
// thread sorts the secondary indexes of the same file. Both jobs are long, single-threaded SQLite work;
// run as two connections of one process they took twice the CPU each, while as two processes they did
// not slow each other (likely SQLite's process-wide allocator statistics, kept behind one mutex in this
// build), so the second job gets a process of its own. The child reads the filled tables through WAL
// (it sees the rows as committed before it started, whatever the parent writes meanwhile) and writes
// contentless full-text tables into a file of its own; the parent then copies their segments into the
// real full-text tables (index-schema.ts, fullTextFromCopySql).

import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { workerEntry } from '../threads/worker-entry.js';
import { contentlessFullTextSql } from './index-schema.js';
import { MMAP_BYTES_MAX, SqliteConnection } from './sqlite-connection.js';

const CHILD = workerEntry(import.meta.url, 'full-text-build-child');

/** The child's page cache for its own file; FTS5 builds its segments in its own buffer. */
const CACHE_KIB = 65_536;

/** The child's output file beside an index file being rebuilt. */
export function fullTextFileFor(indexFile: string): string {
  return `${indexFile}.fulltext`;
}

/** The child's work: full-text tables for the rows of `indexFile`, written into `outputFile`. */
export async function buildFullTextFile(indexFile: string, outputFile: string): Promise<void> {
  fs.rmSync(outputFile, { force: true });
  const connection = await SqliteConnection.open(outputFile);
  try {
    // Nothing here needs a journal or syncs: a failed build is thrown away whole.
    await connection.exec(`PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -${CACHE_KIB}; PRAGMA temp_store = MEMORY;`);
    await connection.run('ATTACH ? AS source', [indexFile]);
    // The source is read through a map, as the parent reads it while sorting (index-store.ts).
    await connection.exec(`PRAGMA source.mmap_size = ${MMAP_BYTES_MAX};`);
    await connection.exec(`BEGIN; ${contentlessFullTextSql('source')} COMMIT;`);
    await connection.exec('DETACH source;');
  } finally {
    await connection.close();
  }
}

export interface FullTextBuild {
  /** Resolves when the child has written the file; rejects if it failed. */
  readonly done: Promise<void>;
  /** Stops the child (the parent gave up on the build). */
  cancel(): void;
}

/** Starts the child process; `indexFile` must be in WAL mode with its tables filled and committed. */
export function buildFullTextInChild(indexFile: string, outputFile: string): FullTextBuild {
  let child: ChildProcess;
  const done = new Promise<void>((resolve, reject) => {
    child = fork(fileURLToPath(CHILD.file), [indexFile, outputFile], {
      execArgv: CHILD.execArgv ?? process.execArgv,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let errors = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      errors = (errors + text).slice(-2_000);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`full-text build failed (${signal ?? `exit ${code}`}): ${errors.trim() || 'no message'}`));
    });
  });
  // The parent awaits this only after sorting its indexes; a failure before then is not unhandled.
  done.catch(() => undefined);
  return { done, cancel: () => child.kill('SIGKILL') };
}
