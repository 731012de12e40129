// A full disk under the log where the machine cannot make a real one. The nemesis fills a size-capped,
// loop-mounted disk when it may (nemesis/disk-quota.ts: root, loop devices, mkfs.ext4); elsewhere it
// asks the node to fail its log's writes as a full disk fails them, at the one place a record meets the
// disk (LmdbLog.write), so the node goes down the same path: the record's commit is refused with
// ENOSPC, nothing from it on is acknowledged, the process stops (exit 70) and replays on its next start.
//
// Only when FOLIO_TEST_HOOKS=1 *and* FOLIO_TEST_DISK_FULL_FILE names a file: the log's disk is "full"
// for as long as that file exists, looked for every DISK_FULL_READ_EVERY_MS on a timer (never per write).
// Without both variables nothing is read and the log writes as it always does (docs/operations.md).

import fs from 'node:fs';
import { testHookFile } from '../threads/test-hooks.js';

const DISK_FULL_READ_EVERY_MS = 50;

/** The file whose presence fills the log's disk, when the process runs with test hooks on; undefined otherwise. */
export function testDiskFullFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return testHookFile('FOLIO_TEST_DISK_FULL_FILE', env);
}

/** What the log asks before each write: the error a full disk would give now, if the test says it is full. */
export type WriteFault = () => Error | undefined;

/** The write fault of the test's file (watched from now on), or undefined when test hooks are off. */
export function injectedDiskFull(env: NodeJS.ProcessEnv = process.env): WriteFault | undefined {
  const file = testDiskFullFile(env);
  if (file === undefined) return undefined;
  let full = fs.existsSync(file);
  setInterval(() => {
    full = fs.existsSync(file);
  }, DISK_FULL_READ_EVERY_MS).unref();
  return () => (full ? Object.assign(new Error('ENOSPC: no space left on device (a full disk injected by test hooks)'), { code: 'ENOSPC' }) : undefined);
}
