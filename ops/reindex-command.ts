// `folio reindex`: rebuilds the query index (data/index.sqlite) from the log. If a server answers at the
// configured address it is asked to rebuild itself (POST /search/reindex) and the command follows its
// progress; otherwise the index file is rebuilt here, beside the old one, and renamed over it when
// complete. A terminal gets a progress bar; anything else gets a plain line at each tenth.

import fs from 'node:fs';
import { buildIndexFile } from '../index/secondary-index.js';
import { indexFileIn, removeIndexFiles } from '../index/index-store.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import type { FolioConfig } from '../server/config.js';
import { serverUrl, serviceHeaders } from './server-address.js';

const POLL_INTERVAL_MS = 250;
const HEALTH_TIMEOUT_MS = 1_000;
const BAR_WIDTH = 30;

interface Progress {
  processed: number;
  target: number;
  rows: number;
  rowsPerSecond: number;
}

/** Draws progress: a bar redrawn in place on a terminal, one line per tenth otherwise. */
export class ProgressReporter {
  private lastTenth = -1;

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {}

  update(progress: Progress): void {
    const fraction = progress.target === 0 ? 1 : Math.min(1, progress.processed / progress.target);
    const percent = Math.floor(fraction * 100);
    const detail = `seq ${progress.processed}/${progress.target}, ${progress.rows} rows, ${progress.rowsPerSecond} rows/s`;
    if (this.out.isTTY) {
      const filled = Math.round(fraction * BAR_WIDTH);
      this.out.write(`\rreindex [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(percent).padStart(3)}% ${detail}\u001b[K`);
      return;
    }
    const tenth = Math.floor(percent / 10);
    if (tenth > this.lastTenth) {
      this.lastTenth = tenth;
      this.out.write(`reindex ${percent}% ${detail}\n`);
    }
  }

  done(message: string): void {
    this.out.write((this.out.isTTY ? '\n' : '') + message + '\n');
  }
}

export async function reindexCommand(config: FolioConfig, args: string[]): Promise<number> {
  const reporter = new ProgressReporter();
  if (!args.includes('--offline')) {
    const base = serverUrl(config);
    if (await answers(base)) return reindexOnline(base, config, reporter);
  }
  return reindexOffline(config, reporter);
}

async function answers(base: string): Promise<boolean> {
  try {
    const response = await fetch(`${base}/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    return response.ok;
  } catch {
    return false;
  }
}

async function reindexOnline(base: string, config: FolioConfig, reporter: ProgressReporter): Promise<number> {
  const headers = serviceHeaders(config);
  const started = await fetch(`${base}/search/reindex`, { method: 'POST', headers });
  if (started.status === 409) process.stderr.write('a reindex is already running on the server; following it\n');
  else if (!started.ok) {
    process.stderr.write(`the server refused the reindex (${started.status}): ${await started.text()}\n`);
    return 1;
  }
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    const response = await fetch(`${base}/search/reindex`, { headers });
    if (!response.ok) {
      process.stderr.write(`cannot read reindex progress (${response.status})\n`);
      return 1;
    }
    const status = (await response.json()) as {
      status: string; processed_seq: number; target_seq: number; rows_written: number; rows_per_second: number; error?: string;
    };
    reporter.update({ processed: status.processed_seq, target: status.target_seq, rows: status.rows_written, rowsPerSecond: status.rows_per_second });
    if (status.status === 'completed') {
      reporter.done(`reindex complete: ${status.rows_written} rows (server at ${base})`);
      return 0;
    }
    if (status.status === 'failed') {
      reporter.done(`reindex failed: ${status.error ?? 'unknown error'}`);
      return 1;
    }
  }
}

async function reindexOffline(config: FolioConfig, reporter: ProgressReporter): Promise<number> {
  const walDir = LmdbLog.directoryIn(config.data_dir);
  if (!fs.existsSync(walDir)) {
    process.stderr.write(`no log in ${config.data_dir} (expected ${walDir})\n`);
    return 1;
  }
  const log = LmdbLog.open({ dir: walDir });
  const file = indexFileIn(config.data_dir);
  const started = performance.now();
  let rows = 0;
  try {
    const target = log.durableSeq;
    reporter.update({ processed: 0, target, rows: 0, rowsPerSecond: 0 });
    const built = await buildIndexFile(`${file}.rebuild`, log, {
      onBatch: (report) => {
        rows += report.rows;
        const seconds = (performance.now() - started) / 1000;
        reporter.update({ processed: report.checkpoint, target, rows, rowsPerSecond: seconds > 0 ? Math.round(rows / seconds) : 0 });
      },
    });
    removeIndexFiles(file);
    fs.renameSync(built, file);
    const seconds = (performance.now() - started) / 1000;
    reporter.done(`reindex complete: ${rows} rows from ${target} events in ${seconds.toFixed(1)} s (${file})`);
    return 0;
  } finally {
    await log.close();
  }
}
