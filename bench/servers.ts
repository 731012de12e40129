// The servers the HTTP benches load: Folio as the built CLI in a child process (the way it runs in
// production, on its own data directory), and the bare Koa + koa-body baseline or the Postgres peer
// behind that same Koa server, also child processes so each gets a CPU of its own away from the load
// generator. Plus a tiny JSON client for set-up requests.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LISTENING_LINE, makeTempDir, removeTempDir, spawnChild, waitForOutput, type Child } from './resources.js';
import { NODE_FLAGS } from '../threads/node-flags.js';
import type { PostgresConnection } from './postgres/postgres-server.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FOLIO_CLI = path.resolve(HERE, '../bin/folio.js');
const BARE_SERVER = path.resolve(HERE, 'bare-koa-server.js');

export interface RunningServer {
  url: string;
  pid: number;
  child: Child;
  /** Stops the server (SIGTERM, so Folio flushes and exits 0) and removes its data, if any. */
  stop(): Promise<void>;
  /** If the process ended without stop() being called: how, with the end of its stderr. */
  unexpectedExit(): string | undefined;
}

/** Notes an exit that the bench did not ask for, so a failing load can say the server was gone. */
function watchExit(name: string, child: Child): { stopping(): void; unexpectedExit(): string | undefined } {
  let stopping = false;
  let report: string | undefined;
  void child.exited.then((how) => {
    if (stopping) return;
    const cause = how === 0 ? ' (exit 0 without being stopped: something else sent it SIGTERM or SIGINT)' : '';
    report = `${name} (pid ${child.pid}) ended on its own with ${how}${cause}; stderr ends:\n${child.stderr().slice(-2000)}`;
  });
  return { stopping: () => void (stopping = true), unexpectedExit: () => report };
}

/** The error to report: the original one, plus any server that was found gone. */
export function explainFailure(error: unknown, servers: Array<RunningServer | undefined>): Error {
  const gone = servers.map((server) => server?.unexpectedExit()).filter((text): text is string => text !== undefined);
  if (gone.length === 0) return error as Error;
  return new Error(`${(error as Error).message}\n${gone.join('\n')}`);
}

/**
 * How long a server under `--cpu-prof` is given to exit: it writes a profile per thread as it exits
 * (the main thread, each HTTP worker, the index and history threads), which is serialised after the
 * load and can take longer than the usual grace on two busy cores.
 */
export const PROFILED_STOP_GRACE_MS = 120_000;

/** `workers`: server.workers (FOLIO_WORKERS); unset, Folio's default. `stopGraceMs`: how long stop() waits before SIGKILL. */
export async function startFolio(label: string, options: { nodeArgs?: string[]; workers?: number; stopGraceMs?: number } = {}): Promise<RunningServer> {
  const dataDir = makeTempDir(label);
  const child = spawnChild(process.execPath, [...NODE_FLAGS, ...(options.nodeArgs ?? []), FOLIO_CLI, 'serve'], {
    env: {
      ...process.env, FOLIO_PORT: '0', FOLIO_HOST: '127.0.0.1', FOLIO_DATA_DIR: dataDir,
      FOLIO_LOG_LEVEL: process.env.FOLIO_BENCH_SERVER_LOG_LEVEL ?? 'warn',
      ...(options.workers === undefined ? {} : { FOLIO_WORKERS: String(options.workers) }),
    },
  });
  const watch = watchExit('folio', child);
  try {
    const [, url] = await waitForOutput(child, LISTENING_LINE);
    return {
      url: url!,
      pid: child.pid,
      child,
      unexpectedExit: watch.unexpectedExit,
      async stop() {
        watch.stopping();
        const code = await child.stop(options.stopGraceMs);
        removeTempDir(dataDir);
        if (code !== 0) throw new Error(`folio exited with ${code} on SIGTERM; stderr:\n${child.stderr()}`);
      },
    };
  } catch (error) {
    await child.stop(1_000);
    removeTempDir(dataDir);
    throw error;
  }
}

/** The baseline: Koa + koa-body answering POST /transactions with `responseJson`, status 201. */
export function startBareKoa(responseJson: string): Promise<RunningServer> {
  return startKoaServer('bare Koa', { FOLIO_BENCH_BARE_RESPONSE: responseJson });
}

/** How long the peer behind Koa may take to open its pool (hundreds of connections on a busy machine). */
const PEER_KOA_START_MS = 120_000;

/**
 * The same Koa server in front of the Postgres peer (bench/postgres-peer), calling it through a pg pool
 * of `poolConnections` connections (opened before it listens) for each POST.
 */
export function startPeerKoa(connection: PostgresConnection, poolConnections: number): Promise<RunningServer> {
  return startKoaServer('peer behind Koa', { FOLIO_BENCH_PEER: JSON.stringify({ connection, pool_connections: poolConnections }) }, PEER_KOA_START_MS);
}

async function startKoaServer(name: string, env: Record<string, string>, startMs?: number): Promise<RunningServer> {
  const child = spawnChild(process.execPath, [...NODE_FLAGS, BARE_SERVER], { env: { ...process.env, ...env } });
  const watch = watchExit(name, child);
  try {
    const [, url] = await waitForOutput(child, LISTENING_LINE, startMs);
    return {
      url: url!,
      pid: child.pid,
      child,
      unexpectedExit: watch.unexpectedExit,
      async stop() {
        watch.stopping();
        await child.stop();
      },
    };
  } catch (error) {
    await child.stop(1_000);
    throw error;
  }
}

export interface JsonResponse {
  status: number;
  text: string;
  body: any;
}

/** One request with a JSON body; bench bodies hold only small amounts, so plain JSON is exact here. */
export async function requestJson(baseUrl: string, method: string, route: string, body?: unknown): Promise<JsonResponse> {
  const response = await fetch(baseUrl + route, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, text, body: parsed };
}

/** Like requestJson, but anything other than the expected status stops the bench. */
export async function expectJson(baseUrl: string, method: string, route: string, status: number, body?: unknown): Promise<JsonResponse> {
  const response = await requestJson(baseUrl, method, route, body);
  if (response.status !== status) {
    throw new Error(`${method} ${route}: expected ${status}, got ${response.status}: ${response.text}`);
  }
  return response;
}

/** Folio's group-commit counters from /metrics: records written, events in them, seconds to durable. */
export interface WalCounters {
  commits: number;
  events: number;
  flushSeconds: number;
}

export async function walCounters(baseUrl: string): Promise<WalCounters> {
  const { status, text } = await requestJson(baseUrl, 'GET', '/metrics');
  const read = (name: string): number => {
    const match = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
    if (status !== 200 || !match) throw new Error(`no ${name} in Folio's /metrics (status ${status})`);
    return Number(match[1]);
  };
  return {
    commits: read('folio_wal_batch_events_count'),
    events: read('folio_wal_batch_events_sum'),
    flushSeconds: read('folio_wal_flush_seconds_sum'),
  };
}

/** Mean events per commit and mean milliseconds from sealing a record to its durability, between two reads. */
export function walDelta(before: WalCounters, after: WalCounters): { commits: number; eventsPerCommit: number; commitMs: number } {
  const commits = after.commits - before.commits;
  return {
    commits,
    eventsPerCommit: commits === 0 ? 0 : (after.events - before.events) / commits,
    commitMs: commits === 0 ? 0 : ((after.flushSeconds - before.flushSeconds) * 1000) / commits,
  };
}
