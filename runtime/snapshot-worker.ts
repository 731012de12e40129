// One snapshot job, in a worker thread: load the newest snapshot (verified: it must restore into the
// state its header records), replay the durable log after it up to
// the target seq with the engine's own applyEvent, write the new snapshot (hash, encode, write, fsync),
// prune old ones, report, and exit. The state copy exists only while the job runs: between snapshots the
// server holds the only copy of its state and pays nothing per request for snapshotting. All the heavy
// work happens here, so the server's event loop only starts the job and reads its one answer.
//
// The job only applies durable records, so a snapshot never holds an event a crash could take back.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { CrashPoints } from '../snapshots/crash-points.js';
import { LogReader } from '../wal/log-reader.js';
import { pruneSnapshots, removeTempFiles, snapshotDirectoryIn, writeSnapshotFile } from '../snapshots/snapshot-directory.js';
import { BODY_OFFSET, readHeader } from '../snapshots/snapshot-file.js';
import { useNewestSnapshot } from '../snapshots/snapshot-loader.js';
import type { SnapshotInfo, ToMain, WorkerConfig } from './snapshot-messages.js';
import { checkReadsBack, StateReplica } from './state-replica.js';

const port = parentPort;
if (!port) throw new Error('snapshot-worker runs as a worker thread');
const config = workerData as WorkerConfig;
const crash = CrashPoints.fromEnvironment(config.crashCounter);
const dir = snapshotDirectoryIn(config.dataDir);

function send(message: ToMain): void {
  port?.postMessage(message);
}

function log(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void {
  send({ type: 'log', level, msg, fields });
}

/**
 * Snapshots are background work: on Linux this thread takes a lower scheduling priority (nice 10) so
 * that, when CPUs are scarce, the thread answering requests wins. Elsewhere it is simply skipped.
 */
const WORKER_NICE = 10;
function lowerOwnPriority(): void {
  try {
    const threadId = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, WORKER_NICE);
  } catch {
    // not Linux, or not permitted: run at normal priority
  }
}

function run(): void {
  lowerOwnPriority();
  const reader = LogReader.open(config.dataDir);
  try {
    removeTempFiles(dir);
    // The newest snapshot that restores into the state it records; one at or past the target is the answer.
    const newest = useNewestSnapshot({
      dir,
      log: reader,
      logEndSeq: config.targetSeq,
      onSkip: ({ file, reason }) => log('warn', 'snapshot skipped; trying the next older one', { file, reason }),
    }, (loaded) => (loaded.contents.header.seq >= config.targetSeq ? undefined : StateReplica.from(loaded)));
    if (newest && newest.used === undefined) {
      send({ type: 'written', info: infoOf(newest.loaded.file, false) });
      return;
    }
    const loaded = newest?.loaded;
    const replica = newest?.used ?? StateReplica.from(undefined);
    replica.catchUp(reader, config.targetSeq);
    if (replica.appliedSeq === 0 || (loaded && replica.appliedSeq <= loaded.contents.header.seq)) {
      if (loaded) send({ type: 'written', info: infoOf(loaded.file, false) });
      else send({ type: 'failed', message: 'the log is empty: nothing to snapshot' });
      return;
    }
    const started = performance.now();
    const identity = replica.identity(Date.now());
    const hashMilliseconds = performance.now() - started;
    const written = writeSnapshotFile(dir, replica.state, identity, crash, checkReadsBack);
    const removed = pruneSnapshots(dir, config.keep, crash);
    send({
      type: 'written',
      removed,
      info: {
        seq: written.header.seq,
        file: written.file,
        size_bytes: written.size_bytes,
        state_hash: written.header.state_hash,
        created_at: written.header.created_at,
        milliseconds: Math.round(performance.now() - started),
        hash_milliseconds: Math.round(hashMilliseconds),
        created: true,
      },
    });
  } catch (error) {
    send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  } finally {
    void reader.close();
  }
}

function infoOf(file: string, created: boolean): SnapshotInfo {
  const header = readHeader(file);
  return {
    seq: header.seq,
    file,
    size_bytes: BODY_OFFSET + header.body_bytes,
    state_hash: header.state_hash,
    created_at: header.created_at,
    milliseconds: 0,
    hash_milliseconds: 0,
    created,
  };
}

run();
