// The projector's own thread (index/projector-thread.ts starts it; it lives here because it joins two
// adapters, the index and the log). Reading and decoding the log, folding events and building rows all
// happen here, so the request path never waits behind them; only small messages cross over. It opens
// the log's LMDB environment (lmdb-js shares one environment between the threads of a process) and the
// index's writer connection; the main thread keeps the readers.
//
// From the main thread: {type:'durable', seq, batch?} (the log is durable up to seq; the batch carries
// the records that became durable, see pushed-records.ts), {type:'text'} (someone waits for the
// full-text indexes: they take the next turn), {type:'finish', minSeq}
// (build mode: catch up to at least minSeq, then close the file so it can be moved), {type:'stop'}.
// To the main thread: ready, batch reports, errors, poison reports, and stopped / finished / failed at
// the end.

import { parentPort, workerData } from 'node:worker_threads';
import { LmdbLog } from '../wal/lmdb-log.js';
import { IndexStore } from '../index/index-store.js';
import { Projector, REBUILD_PROJECTOR_LIMITS, type LogSource } from '../index/projector.js';
import type { FromWorker, ProjectorWorkerSettings, ToWorker } from '../index/projector-messages.js';
import { PUSHED_BYTES_MAX, PushedRecords } from '../index/pushed-records.js';
import { RecordSpill, spillFileFor } from '../index/record-spill.js';
import { CorruptRecordError, decodeLogRecord } from '../wal/log-record-codec.js';

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('the projector worker must run in a worker thread');
  const settings = workerData as ProjectorWorkerSettings;
  const send = (message: FromWorker): void => port.postMessage(message);
  const log = LmdbLog.open({ dir: settings.walDir, reader: true });
  let durableSeq = settings.durableSeq;
  // Records past what the thread holds in memory wait in a file, not in the log's map (record-spill.ts).
  const spill = new RecordSpill(spillFileFor(settings.indexFile));
  const codec = { decode: decodeLogRecord, corrupt: (key: number, detail: string) => new CorruptRecordError(key, detail) };
  const pushed = new PushedRecords(codec, PUSHED_BYTES_MAX, spill);
  const source: LogSource = {
    get durableSeq() {
      return durableSeq;
    },
    read: (fromSeq, toSeq) => pushed.read(fromSeq, toSeq ?? durableSeq, (from, to) => log.read(from, to)),
  };
  const store = settings.build ? await IndexStore.openForBuild(settings.indexFile) : await IndexStore.openWriter(settings.indexFile);
  const projector = await Projector.create(store, source, {
    limits: settings.build ? { ...REBUILD_PROJECTOR_LIMITS, ...settings.limits } : settings.limits,
    onError: (error) => send({ type: 'error', message: error.message }),
    onPoison: (poison) => send({ type: 'poison', poison }),
  });
  projector.onBatch((report) => send({ type: 'batch', ...report }));
  port.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'durable':
        if (message.batch) pushed.push(message.batch);
        durableSeq = Math.max(durableSeq, message.seq);
        projector.wake();
        return;
      case 'text':
        projector.wantText();
        return;
      case 'finish':
        void finish(message.minSeq);
        return;
      case 'stop':
        void projector.stop().then(() => store.close()).then(() => {
          spill.close();
          send({ type: 'stopped' });
          port.close();
        });
    }
  });

  async function finish(minSeq: number): Promise<void> {
    if (!port) return;
    try {
      while (projector.checkpoint < minSeq) await projector.catchUp();
      await projector.stop();
      await store.closeForMove();
      spill.close();
      send({ type: 'finished', checkpoint: projector.checkpoint });
    } catch (error) {
      send({ type: 'failed', message: (error as Error).message });
    }
    port.close();
  }

  send({ type: 'ready', checkpoint: projector.checkpoint, text_checkpoint: projector.textCheckpoint });
  projector.wake();
}

main().catch((error: unknown) => {
  parentPort?.postMessage({ type: 'failed', message: (error as Error).message } satisfies FromWorker);
  parentPort?.close();
});
