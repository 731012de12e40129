// `npm run fuzz -- --requests 1000000 [--seed N] [--concurrency N]`: the long fuzz run against the built
// CLI (`dist/bin/folio.js serve`) in a child process, on a temp data directory. The same cases, oracles
// and checks as test/fuzz.int.test.ts, plus what only a real process can show:
//   - halfway, the server is killed with SIGKILL while requests are in flight, started again on the same
//     directory, and every write acknowledged so far is looked for (answers lost to the kill are counted
//     as interrupted);
//   - at the end it is stopped with SIGTERM (it must exit 0), `folio verify` replays the log (checksums,
//     hashes, zero sums), and after another start every acknowledged write is looked for again.
// A progress line goes to stderr every few seconds; the end prints counts per status and error code,
// each failure group with its smallest example, and the figures. Exit 1 on any failure, lost write,
// hang or crash. Other options: --timeout-ms N (a hang), --case I (send only case I after the set-up),
// --keep-data (leave the data directory), --no-kill (skip the SIGKILL).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LISTENING_LINE, makeTempDir, removeTempDir, spawnChild, waitForOutput, type Child } from '../bench/resources.js';
import { NODE_FLAGS } from '../threads/node-flags.js';
import { createSender } from './fuzz-request.js';
import { FuzzSession } from './fuzz-session.js';
import { indexCatchUpProblem, isHealthy, lostWrites, zeroSumViolations } from './ledger-checks.js';
import { setUpLedger } from './ledger-setup.js';
import { FUZZ_ROUTES } from './route-table.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/folio.js');
const PROGRESS_EVERY_MS = 5_000;
/** SRCH_INDEX_BEHIND during the run is allowed; an index still behind this long after it is not. */
const INDEX_CATCH_UP_MS = 120_000;

interface RunArguments {
  requests: number;
  seed: number;
  concurrency: number;
  timeoutMs: number;
  onlyCase: number | undefined;
  keepData: boolean;
  kill: boolean;
}

function parseArguments(argv: string[]): RunArguments {
  const options: RunArguments = {
    requests: 100_000, seed: Math.floor(Math.random() * 2 ** 32), concurrency: 16, timeoutMs: 60_000,
    onlyCase: undefined, keepData: false, kill: true,
  };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = (): number => {
      const number = Number(argv[++index]);
      if (!Number.isSafeInteger(number) || number < 0) throw new Error(`${flag} needs a whole number`);
      return number;
    };
    if (flag === '--requests') options.requests = value();
    else if (flag === '--seed') options.seed = value() >>> 0;
    else if (flag === '--concurrency') options.concurrency = Math.max(1, value());
    else if (flag === '--timeout-ms') options.timeoutMs = Math.max(1, value());
    else if (flag === '--case') options.onlyCase = value();
    else if (flag === '--keep-data') options.keepData = true;
    else if (flag === '--no-kill') options.kill = false;
    else throw new Error(`unknown option ${flag}; see the header of fuzz/fuzz-run.ts`);
  }
  return options;
}

interface Server {
  child: Child;
  url: string;
  /** Set before the runner ends the process itself, so an exit is not taken for a crash. */
  stopping: boolean;
}

async function startServer(dataDir: string): Promise<Server> {
  const child = spawnChild(process.execPath, [...NODE_FLAGS, CLI, 'serve'], {
    // error, not warn: failing hook deliveries warn on every attempt, and the runner keeps all output.
    env: { ...process.env, FOLIO_PORT: '0', FOLIO_HOST: '127.0.0.1', FOLIO_DATA_DIR: dataDir, FOLIO_LOG_LEVEL: 'error' },
  });
  const [, url] = await waitForOutput(child, LISTENING_LINE, 120_000);
  return { child, url: url!, stopping: false };
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The verify report's lines (stdout) first, then its progress and errors (stderr), and how it ended. */
function verify(dataDir: string): { ok: boolean; output: string } {
  const result = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'verify', '--data', dataDir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ended = result.error ? `did not finish: ${result.error.message}` : result.signal ? `killed by ${result.signal}` : `exit ${result.status}`;
  const report = (result.stdout ?? '').split('\n').filter((line) => !line.startsWith('zero-sum ') || !line.endsWith(': settled 0, inflight 0'));
  const output = `${report.join('\n')}\n${(result.stderr ?? '').slice(-2_000)}\n(${ended})`;
  return { ok: result.status === 0 && /verify: OK/.test(result.stdout ?? ''), output };
}

async function main(options: RunArguments): Promise<number> {
  // A kept directory is made outside the bench's registry, which removes its directories at exit.
  const dataDir = options.keepData ? fs.mkdtempSync(path.join(os.tmpdir(), 'folio-fuzz-')) : makeTempDir('fuzz');
  const problems: string[] = [];
  let server = await startServer(dataDir);
  let crashed: string | undefined;
  const watch = (running: Server): void => {
    void running.child.exited.then((how) => {
      if (!running.stopping) crashed = `the server (pid ${running.child.pid}) exited on its own with ${how}; stderr ends:\n${running.child.stderr().slice(-3_000)}`;
    });
  };
  watch(server);
  log(`fuzz: seed ${options.seed}, ${options.requests} requests, concurrency ${options.concurrency}; server ${server.url}, data ${dataDir}`);
  log(`fuzz: replay with npm run fuzz -- --seed ${options.seed} --requests ${options.requests}`);
  const session = new FuzzSession({
    seed: options.seed, routes: FUZZ_ROUTES, concurrency: options.concurrency,
    sender: createSender(server.url, { timeoutMs: options.timeoutMs, connections: options.concurrency }),
  });
  await setUpLedger(session);

  const killAt = options.kill && options.onlyCase === undefined ? Math.floor(options.requests / 2) : -1;
  const restart = async (): Promise<void> => {
    server = await startServer(dataDir);
    watch(server);
    session.sender.close();
    session.sender = createSender(server.url, { timeoutMs: options.timeoutMs, connections: options.concurrency });
  };
  const kill = (): void => {
    void session.interrupt(async () => {
      log(`fuzz: SIGKILL at case ${killAt} with requests in flight`);
      server.stopping = true;
      server.child.process.kill('SIGKILL');
      await server.child.exited;
    }, async () => {
      await restart();
      const lost = await lostWrites(session.sender, session.writes);
      log(`fuzz: restarted after SIGKILL; ${session.writes.size} acknowledged writes looked for, ${lost.length} missing`);
      problems.push(...lost.map((line) => `lost after SIGKILL: ${line}`));
    });
  };

  const started = performance.now();
  const progress = setInterval(() => {
    const seconds = (performance.now() - started) / 1000;
    log(`fuzz: ${session.casesRun}/${options.requests} in ${seconds.toFixed(0)} s (${(session.casesRun / seconds).toFixed(0)}/s), `
      + `failures ${session.failureCount} in ${session.failures.size} groups, acknowledged writes ${session.writes.size}`);
    if (crashed) process.exit(finish(session, options, problems, crashed, started));
  }, PROGRESS_EVERY_MS);
  try {
    if (options.onlyCase !== undefined) await session.run(options.onlyCase, options.onlyCase + 1);
    else await session.run(0, options.requests, (index) => (index === killAt ? kill() : undefined));
  } finally {
    clearInterval(progress);
  }
  const runSeconds = (performance.now() - started) / 1000;
  if (crashed) return finish(session, options, problems, crashed, started);

  if (!(await isHealthy(session.sender))) problems.push('GET /health did not answer 200 after the run');
  problems.push(...(await zeroSumViolations(session.sender)).map((line) => `zero sum after the run: ${line}`));
  const indexProblem = await indexCatchUpProblem(session.sender, INDEX_CATCH_UP_MS);
  if (indexProblem) problems.push(`${indexProblem}\nthe server's log ends:\n${server.child.stderr().slice(-3_000)}`);
  server.stopping = true;
  const exit = await server.child.stop(60_000);
  if (exit !== 0) problems.push(`SIGTERM: the server exited with ${exit}, not 0`);
  const verified = verify(dataDir);
  if (!verified.ok) problems.push(`folio verify failed:\n${verified.output.slice(0, 20_000)}`);
  await restart();
  problems.push(...(await lostWrites(session.sender, session.writes)).map((line) => `lost after SIGTERM and restart: ${line}`));
  problems.push(...(await zeroSumViolations(session.sender)).map((line) => `zero sum after restart: ${line}`));
  server.stopping = true;
  await server.child.stop(60_000);
  session.sender.close();
  log(`fuzz: ${session.casesRun} requests in ${runSeconds.toFixed(1)} s (${(session.casesRun / runSeconds).toFixed(0)} requests/s)`);
  const code = finish(session, options, problems, undefined, started);
  if (options.keepData) log(`fuzz: data left in ${dataDir}`);
  else removeTempDir(dataDir);
  return code;
}

/** Prints the summary; returns the exit code. */
function finish(session: FuzzSession, options: RunArguments, problems: string[], crashed: string | undefined, started: number): number {
  const seconds = (performance.now() - started) / 1000;
  const lines = [
    '',
    `seed ${options.seed}: ${session.casesRun} requests, ${seconds.toFixed(1)} s in all, concurrency ${options.concurrency}`,
    `answers by status and code:\n  ${session.statusLines().join('\n  ')}`,
    `interrupted by the SIGKILL: ${session.interrupted}; 503 retry later (QUEUE_BACKPRESSURE, SRCH_INDEX_BEHIND, SNAPSHOT_UNAVAILABLE): ${session.retryLater}; refused by Node's HTTP parser: ${session.parserRefused}; sent again after a connection reset: ${session.resent}`,
    `acknowledged writes: ${session.writes.size} (transactions ${session.writes.transactions.size}, bulk items ${session.writes.bulkReferences.size})`,
    `failures: ${session.failureCount} in ${session.failures.size} groups`,
  ];
  if (session.failures.size > 0) lines.push(session.failureReport());
  if (problems.length > 0) lines.push(`problems after the run:\n  ${problems.join('\n  ')}`);
  if (crashed) lines.push(`CRASH: ${crashed}`);
  const failed = session.failures.size > 0 || problems.length > 0 || crashed !== undefined;
  lines.push(failed ? 'FUZZ FAILED' : 'fuzz: OK (no 5xx, hang, crash, stack trace, inexact amount or lost write)');
  process.stdout.write(`${lines.join('\n')}\n`);
  return failed ? 1 : 0;
}

/**
 * The server must run on this very Node: on an older one `folio` re-runs itself on the bundled Node 24 as
 * a grandchild, and a SIGKILL to the child would leave that grandchild serving the same directory.
 */
function checkNode(): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) throw new Error(`Node ${process.versions.node}: run the fuzzer through \`npm run fuzz\`, which uses the bundled Node 24`);
}

checkNode();
main(parseArguments(process.argv.slice(2))).then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`fuzz: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
