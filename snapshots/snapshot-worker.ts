// The snapshot worker thread. It keeps its own replica of the working state by reading the log as the
// server reports records durable, and writes snapshots from that replica: every N events, every T
// seconds (when anything changed), and when asked. All the heavy work (hashing the state, encoding it,
// writing and fsyncing the file, pruning) happens here, so the server's event loop only ever posts one
// small message per log commit.
//
// The replica only ever applies durable records, so a snapshot never holds an event a crash could take
// back from the log.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { CrashPoints } from './crash-points.js';
import { LogReader } from './log-reader.js';
import { listSnapshots, pruneSnapshots, removeTempFiles, snapshotDirectoryIn, writeSnapshotFile } from './snapshot-directory.js';
import { BODY_OFFSET, readHeader } from './snapshot-file.js';
import { loadNewestSnapshot } from './snapshot-loader.js';
import type { SnapshotInfo, ToMain, ToWorker, WorkerConfig } from './snapshot-messages.js';
import { StateReplica } from './state-replica.js';

const port = parentPort;
if (!port) throw new Error('snapshot-worker runs as a worker thread');
const config = workerData as WorkerConfig;
const crash = CrashPoints.fromEnvironment();
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

lowerOwnPriority();
const reader = LogReader.open(config.dataDir);
removeTempFiles(dir);
const loaded = loadNewestSnapshot({ dir, log: reader, logEndSeq: config.durableSeq });
const replica = StateReplica.from(loaded);
let lastSnapshot: SnapshotInfo | undefined = loaded ? infoOf(loaded.file, false) : undefined;
let targetSeq = config.durableSeq;
let catchUpScheduled = false;
let broken = false;
replica.catchUp(reader, targetSeq);
send({ type: 'ready', seq: replica.appliedSeq, snapshot: lastSnapshot });

const interval = config.every_seconds > 0
  ? setInterval(() => {
    catchUp();
    if (!broken && replica.appliedSeq > (lastSnapshot?.seq ?? 0)) snapshot('interval');
  }, config.every_seconds * 1000)
  : undefined;

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'durable':
      if (message.seq > targetSeq) targetSeq = message.seq;
      if (!catchUpScheduled) {
        catchUpScheduled = true;
        setImmediate(catchUpAndMaybeSnapshot);
      }
      return;
    case 'snapshot':
      onDemand(message.id, message.seq);
      return;
    case 'stop':
      clearInterval(interval);
      void reader.close().finally(() => {
        send({ type: 'stopped' });
        port.close();
      });
      return;
  }
});

function catchUp(): void {
  if (broken) return;
  reader.refresh();
  try {
    replica.catchUp(reader, targetSeq);
  } catch (error) {
    // The replica cannot follow the log any more; the server still can (it has its own checks).
    broken = true;
    log('error', 'snapshot replica stopped following the log; no more snapshots until restart', { err: describe(error) });
  }
}

function catchUpAndMaybeSnapshot(): void {
  catchUpScheduled = false;
  catchUp();
  if (broken || config.every_events <= 0) return;
  if (replica.appliedSeq - (lastSnapshot?.seq ?? 0) >= config.every_events) snapshot('events');
}

function onDemand(id: number, seq: number): void {
  if (seq > targetSeq) targetSeq = seq;
  catchUp();
  if (broken) {
    send({ type: 'failed', id, message: 'the snapshot replica is not following the log (see the server log)' });
    return;
  }
  if (lastSnapshot && lastSnapshot.seq === replica.appliedSeq && listSnapshots(dir).some((entry) => entry.seq === lastSnapshot?.seq)) {
    send({ type: 'written', id, info: { ...lastSnapshot, created: false } });
    return;
  }
  snapshot('request', id);
}

function snapshot(reason: string, id?: number): void {
  if (replica.appliedSeq === 0) {
    if (id !== undefined) send({ type: 'failed', id, message: 'the log is empty: nothing to snapshot' });
    return;
  }
  try {
    const started = performance.now();
    const identity = replica.identity(Date.now());
    const hashMilliseconds = performance.now() - started;
    const written = writeSnapshotFile(dir, replica.state, identity, crash);
    const removed = pruneSnapshots(dir, config.keep, crash);
    lastSnapshot = {
      seq: written.header.seq,
      file: written.file,
      size_bytes: written.size_bytes,
      state_hash: written.header.state_hash,
      created_at: written.header.created_at,
      milliseconds: Math.round(performance.now() - started),
      hash_milliseconds: Math.round(hashMilliseconds),
      created: true,
    };
    send({ type: 'written', id, info: lastSnapshot, reason, removed });
  } catch (error) {
    log('error', 'snapshot failed', { err: describe(error), reason });
    if (id !== undefined) send({ type: 'failed', id, message: describe(error) });
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
