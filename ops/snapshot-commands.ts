// The operator commands around snapshots: `folio verify`, `folio snapshot`, `folio snapshots`,
// `folio restore` and `folio backup`. Each returns its exit code: 0 when all is well, 1 when the command
// found a fault or failed, 2 for a usage error. Results go to stdout; progress goes to stderr, as a bar
// on a terminal and as plain lines otherwise.

import path from 'node:path';
import { backupDataDir } from './backup.js';
import { Progress } from './progress.js';
import { restoreDataDir } from './restore.js';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { BODY_OFFSET, readHeader, readSnapshot, SnapshotFileError } from '../snapshots/snapshot-file.js';
import { verifyDataDir, type VerifyReport } from './verify.js';
import { ConfigError, loadConfig } from '../server/config.js';

/** Reads `--name value` from the arguments. */
export type OptionReader = (name: string) => string | undefined;

function dataDirFrom(option: OptionReader): string {
  return option('--data') ?? loadConfig(option('--config')).data_dir;
}

function out(line: string): void {
  process.stdout.write(line + '\n');
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

function megabytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export async function verifyCommand(option: OptionReader): Promise<number> {
  const dataDir = dataDirFrom(option);
  out(`verifying ${path.resolve(dataDir)}`);
  const progress = new Progress(process.stderr, 'replay');
  const report = verifyDataDir({
    dataDir,
    onProgress: (seq, end) => progress.update(seq, end),
  });
  progress.done();
  printVerifyReport(report);
  return report.ok ? 0 : 1;
}

export function printVerifyReport(report: VerifyReport): void {
  const logFault = report.faults.find((fault) => fault.kind === 'log');
  out(`log: ${count(report.events)} events in ${count(report.records)} records up to seq ${count(report.endSeq)}, ${logFault ? 'chain broken' : 'chain intact'}`);
  const rowFaults = report.faults.filter((fault) => fault.kind === 'row-hash').length;
  out(`transactions: ${count(report.transactionRows)} rows, ${rowFaults === 0 ? 'every hash matches' : 'hash mismatches found'}`);
  for (const check of report.snapshots) out(check.ok ? `snapshot at seq ${count(check.seq)}: ${check.message} (${check.file})` : `snapshot at seq ${count(check.seq)}: FAULT`);
  if (report.snapshots.length === 0) out('snapshots: none');
  for (const total of report.totals) out(`zero-sum ${total.currency}: settled ${total.settled}, inflight ${total.inflight}`);
  out(`state hash at seq ${count(report.endSeq)}: ${report.stateHash}`);
  for (const fault of report.faults) out(`FAULT ${fault.kind}: ${fault.message}`);
  if (report.ok) {
    out(`verify: OK (${(report.milliseconds / 1000).toFixed(1)} s)`);
    return;
  }
  const records = report.faults.map((fault) => fault.record).filter((record): record is number => record !== undefined);
  const first = records.length > 0 ? `; first broken record: ${Math.min(...records)}` : '';
  out(`verify: FAILED with ${report.faults.length} fault(s)${first}`);
}

export async function snapshotCommand(option: OptionReader): Promise<number> {
  const config = loadConfig(option('--config'));
  const host = config.server.host === '0.0.0.0' ? '127.0.0.1' : config.server.host;
  const url = (option('--url') ?? `http://${host}:${config.server.port}`).replace(/\/$/, '');
  const headers: Record<string, string> = {};
  if (config.server.secret_key !== '') headers['X-svc-key'] = config.server.secret_key;
  let response: Response;
  try {
    response = await fetch(`${url}/admin/snapshots`, { method: 'POST', headers });
  } catch (error) {
    process.stderr.write(`folio: cannot reach the server at ${url}: ${(error as Error).message}\n`);
    return 1;
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, any>;
  if (response.status !== 201) {
    process.stderr.write(`folio: snapshot refused (${response.status}): ${body.error ?? response.statusText}\n`);
    return 1;
  }
  const verb = body.created === false ? 'already on disk' : 'written';
  out(`snapshot at seq ${count(body.seq)} ${verb}: ${body.file} (${megabytes(body.size_bytes)}, state hash ${body.state_hash})`);
  return 0;
}

export async function snapshotsCommand(option: OptionReader): Promise<number> {
  const dir = snapshotDirectoryIn(dataDirFrom(option));
  const entries = listSnapshots(dir);
  if (entries.length === 0) {
    out(`no snapshots in ${dir}`);
    return 0;
  }
  out(['SEQ'.padStart(14), 'CREATED'.padEnd(24), 'SIZE'.padStart(10), 'STATE HASH'.padEnd(64), 'STATUS'].join('  '));
  let damaged = 0;
  for (const entry of entries) {
    let row: string[];
    try {
      const header = readHeader(entry.file);
      readSnapshot(entry.file); // checks the body too: an operator choosing a restore point wants to know
      row = [count(header.seq).padStart(14), new Date(header.created_at).toISOString().padEnd(24), megabytes(BODY_OFFSET + header.body_bytes).padStart(10), header.state_hash, 'ok'];
    } catch (error) {
      if (!(error instanceof SnapshotFileError)) throw error;
      damaged += 1;
      row = [count(entry.seq).padStart(14), '?'.padEnd(24), '?'.padStart(10), '?'.padEnd(64), `${error.fault}: ${error.message}`];
    }
    out(row.join('  ') + `  ${path.basename(entry.file)}`);
  }
  return damaged > 0 ? 1 : 0;
}

export async function restoreCommand(option: OptionReader): Promise<number> {
  const snapshotFile = option('--snapshot');
  const targetDir = option('--data');
  if (!snapshotFile || !targetDir) throw new ConfigError('restore needs --snapshot FILE and --data DIR');
  const toSeqText = option('--to-seq');
  const toSeq = toSeqText === undefined ? undefined : Number(toSeqText);
  if (toSeq !== undefined && (!Number.isInteger(toSeq) || toSeq < 1)) throw new ConfigError(`--to-seq must be a positive integer, not ${toSeqText}`);
  const bars = new Map<string, Progress>();
  const report = await restoreDataDir({
    snapshotFile,
    targetDir,
    logDir: option('--log'),
    toSeq,
    onProgress: (phase, done, total) => {
      let bar = bars.get(phase);
      if (!bar) {
        for (const previous of bars.values()) previous.done();
        bars.clear();
        bars.set(phase, (bar = new Progress(process.stderr, phase)));
      }
      bar.update(done, total);
    },
  });
  for (const bar of bars.values()) bar.done();
  out(`restored ${path.resolve(targetDir)}: log up to seq ${count(report.toSeq)} (${count(report.recordsCopied)} records), snapshot at seq ${count(report.snapshotSeq)}`);
  printVerifyReport(report.verify);
  return report.verify.ok ? 0 : 1;
}

export async function backupCommand(option: OptionReader): Promise<number> {
  const outDir = option('--out');
  if (!outDir) throw new ConfigError('backup needs --out DIR');
  const report = await backupDataDir(dataDirFrom(option), outDir);
  for (const skipped of report.skipped) out(`skipped ${skipped}`);
  out(`log copied: up to seq ${count(report.logEndSeq)} (${megabytes(report.logBytes)})`);
  out(report.snapshot ? `snapshot copied: seq ${count(report.snapshot.seq)} (${megabytes(report.snapshot.size_bytes)})` : 'no snapshot to copy: a server started on the backup replays the whole log');
  out(`backup ready in ${path.resolve(outDir)}`);
  return 0;
}
