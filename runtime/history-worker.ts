// The balance history's own thread (index/history-thread.ts starts it; it lives here because it joins two
// adapters, the history store and the log). It folds the durable records the main thread hands over into
// the store, gathering them for up to 100 ms per batch (at once when a reader waits for them), and
// publishes its checkpoint after each commit (index/history-progress.ts) for the readers in every
// thread. It never waits for the SQLite index, which follows the same records in a thread of its own.
//
// At start a store that does not fit the log (its checkpoint past the log's end, or on an event with
// another time: a rewound or restored log) or of another format is emptied and rebuilt from the log.
// Records it was not handed (after a restart, or when it fell too far behind) are read from the log.
// An event naming a balance the store does not hold means the store and the log disagree: the store
// starts over from the log, once per event; a failure again at the same event is reported and retried
// with a growing pause, never skipped.

import { parentPort, workerData } from 'node:worker_threads';
import { backoffMs } from '../engine/backoff.js';
import type { LoggedEvent } from '../engine/events.js';
import { HistoryFollower } from '../index/history-follower.js';
import { HistoryProgress } from '../index/history-progress.js';
import { HistoryMismatchError, HistoryStore } from '../index/history-store.js';
import type { FromHistoryWorker, HistoryWorkerSettings, ToHistoryWorker } from '../index/history-thread.js';
import { PushedRecords } from '../index/pushed-records.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { CorruptRecordError, decodeLogRecord } from '../wal/log-record-codec.js';

/** Bytes of handed-over records the thread holds; past it the oldest are dropped and read from the log. */
const HELD_BYTES_MAX = 16 * 1024 * 1024;
/**
 * Balance changes (postings, creations, metadata changes) per batch: one LMDB transaction each. LMDB
 * holds every page a transaction touches in memory until it commits, and entries land at random places:
 * 20,000 changes held tens of megabytes, which the thread's allocator then kept (the memory bench: 122
 * MiB more resident at 100,000 balances than without the history).
 */
const BATCH_CHANGES_MAX = 5_000;
/**
 * How long records handed over are gathered before a batch, unless a reader waits for them (it raises
 * HistoryProgress.wanted) or much is waiting. Each LMDB commit has fixed costs (its sync) and writes every
 * page it touched whole, and entries land at random places (keyed by balance): the more entries per
 * commit, the fewer pages per entry. Following single transfers, a commit per group commit of the log
 * cost 21-53 µs of CPU a transfer (1,000 and 100,000 balances); in-process, 38 µs an event in batches of
 * 30 events against 19 in batches of 300 (at 1,000 balances). A reader that needs the newest events does
 * not wait for the pause.
 */
const PACE_MS = 100;
/** Bytes handed over past which a batch starts at once. */
const PACE_BYTES_MAX = 1024 * 1024;
/** How long one wait for a reader's wish lasts before it is armed again (it must not hold the thread open). */
const WANTED_WAIT_MS = 1_000;
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('the balance history worker must run in a worker thread');
  const settings = workerData as HistoryWorkerSettings;
  const send = (message: FromHistoryWorker): void => port.postMessage(message);
  const progress = new HistoryProgress(settings.progress);
  const log = LmdbLog.open({ dir: settings.walDir, reader: true });
  const store = HistoryStore.open(settings.historyDir);
  let durableSeq = settings.durableSeq;
  if (!store.hasCurrentFormat() || !fitsLog(log, store, durableSeq)) await store.reset();
  const follower = new HistoryFollower(store, settings.limits);
  progress.wantedNothing();
  progress.published(follower.checkpoint.seq);
  // The history needs the balances alone: transaction records are skipped, not decoded.
  const codec = {
    decode: (key: number, bytes: Buffer) => decodeLogRecord(key, bytes, { transactions: false }),
    corrupt: (key: number, detail: string) => new CorruptRecordError(key, detail),
  };
  const pushed = new PushedRecords(codec, HELD_BYTES_MAX);
  let running: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let paceTimer: NodeJS.Timeout | undefined;
  let gatheredBytes = 0;
  let stopped = false;
  let failures = 0;
  let startedOverAt: number | undefined;

  const wake = (): void => {
    clearTimeout(paceTimer);
    paceTimer = undefined;
    if (running || retryTimer || stopped || follower.checkpoint.seq >= durableSeq) return;
    gatheredBytes = 0;
    running = run().finally(() => {
      running = undefined;
      // Records that came while the batch ran: gathered again, or at once if a reader waits.
      pace();
    });
  };

  /** A batch soon: at once if a reader waits for it or much has come, else after PACE_MS. */
  const pace = (): void => {
    if (running || retryTimer || stopped || follower.checkpoint.seq >= durableSeq) return;
    if (progress.wanted > follower.checkpoint.seq || gatheredBytes >= PACE_BYTES_MAX) {
      wake();
      return;
    }
    paceTimer ??= setTimeout(wake, PACE_MS);
  };

  // A reader raising `wanted` wakes the follower out of its pause.
  void (async () => {
    while (!stopped) {
      await progress.wantedChangedFrom(progress.wanted, WANTED_WAIT_MS);
      if (paceTimer && progress.wanted > follower.checkpoint.seq) wake();
    }
  })();

  const pauseMs = settings.limits?.batch_pause_ms ?? 0;
  async function run(): Promise<void> {
    while (!stopped && follower.checkpoint.seq < durableSeq) {
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      if (stopped) return;
      const from = follower.checkpoint.seq + 1;
      try {
        await follower.apply(batchOf(pushed.read(from, durableSeq, (start, end) => log.read(start, end))));
        failures = 0;
        progress.published(follower.checkpoint.seq);
      } catch (error) {
        await failed(error as Error, from);
        return;
      }
    }
  }

  async function failed(error: Error, seq: number): Promise<void> {
    failures += 1;
    send({ type: 'error', message: `balance history at log seq ${seq}: ${error.message}` });
    if (error instanceof HistoryMismatchError && startedOverAt !== seq) {
      startedOverAt = seq;
      await store.reset();
      follower.restart();
      progress.published(0);
      failures = 0;
    }
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      wake();
    }, failures === 0 ? 0 : backoffMs(RETRY_FIRST_MS, RETRY_MAX_MS, failures));
  }

  port.on('message', (message: ToHistoryWorker) => {
    if (message.type === 'durable') {
      if (message.batch) {
        pushed.push(message.batch);
        gatheredBytes += message.batch.buffer.byteLength;
      }
      durableSeq = Math.max(durableSeq, message.seq);
      pace();
      return;
    }
    stopped = true;
    clearTimeout(retryTimer);
    clearTimeout(paceTimer);
    void (async () => {
      await running;
      await store.close();
      await log.close();
      send({ type: 'stopped' });
      port.close();
    })();
  });
  send({ type: 'ready' });
  wake();
}

/** The events of one batch: whole events, up to BATCH_CHANGES_MAX balance changes (at least one event). */
function* batchOf(events: Iterable<LoggedEvent>): Generator<LoggedEvent> {
  let changes = 0;
  for (const logged of events) {
    yield logged;
    const { event } = logged;
    changes += 1 + (event.postings?.length ?? 0) + (event.balances?.length ?? 0) + (event.metadata_patches?.length ?? 0);
    if (changes >= BATCH_CHANGES_MAX) return;
  }
}

/** Whether the store's checkpoint is in this log: not past its end, and on an event of the same time. */
function fitsLog(log: LmdbLog, store: HistoryStore, durableSeq: number): boolean {
  const checkpoint = store.checkpoint();
  if (checkpoint.seq === 0) return true;
  if (checkpoint.seq > durableSeq) return false;
  for (const { event } of log.read(checkpoint.seq, checkpoint.seq)) return event.at === checkpoint.at;
  return false;
}

main().catch((error: unknown) => {
  parentPort?.postMessage({ type: 'failed', message: (error as Error).message } satisfies FromHistoryWorker);
  parentPort?.close();
});
