// One Folio core as a child process: the same `folio serve` an operator runs (this Node, the flags of
// threads/node-flags.ts, dist/bin/folio.js), on 127.0.0.1 with FOLIO_PORT=0, its own data directory and its
// own master key. The address is read from the `listening on http://HOST:PORT` line it prints. Its
// standard input is a pipe the control plane holds open and never writes: with FOLIO_STOP_ON_STDIN_END
// the core stops when that pipe ends, so no core outlives a control plane that was killed. It runs in
// its instance directory, so a folio.json where the cloud was started is not read.
//
// The child's environment is built, not inherited: the few variables a Node process needs on this
// machine (INHERITED_VARIABLES, LC_*), and the FOLIO_* settings the control plane sets for this core,
// with secrets of the core's own (its master key, its tokenization secret). Nothing else of the control
// plane's environment reaches a tenant's core: not the cloud API key, not an operator's
// FOLIO_WEBHOOK_URL, FOLIO_TOKENIZATION_SECRET, FOLIO_BACKUP_DIR or FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS
// (which would otherwise be shared by every tenant), not NODE_OPTIONS (the flags are the cloud's own).

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS, nodeEnvironment } from '../threads/node-flags.js';

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
/** Lines of a core's stderr kept for reports on why it stopped. */
const STDERR_LINES_KEPT = 40;

/** The built CLI: beside this module in dist/, or dist/ of the checkout when this runs from source. */
export function folioEntryFile(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const built = path.resolve(here, '../bin/folio.js');
  return fs.existsSync(built) ? built : path.resolve(here, '../dist/bin/folio.js');
}

/** Variables of the control plane's environment a core gets too: what any process needs to run here. */
const INHERITED_VARIABLES = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'TMPDIR', 'TZ', 'LANG', 'LANGUAGE', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR']);
const INHERITED_PREFIX = 'LC_';

export interface CoreLaunch {
  dataDir: string;
  secretKey: string;
  /** The core's own key for tokenizing identity fields (64 hex digits). */
  tokenizationSecret: string;
  /** Whether its hooks may deliver to loopback and private addresses (the cloud's setting for every core). */
  hooksAllowPrivateNetworks: boolean;
  /** Starts the core as a follower of the ledger in this directory. */
  followDataDir?: string;
  logLevel: string;
}

export interface CoreLogger {
  warn(details: object, message: string): void;
}

export function childEnvironment(launch: CoreLaunch, parent: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (INHERITED_VARIABLES.has(name) || name.startsWith(INHERITED_PREFIX)) env[name] = value;
  }
  Object.assign(env, {
    FOLIO_HOST: '127.0.0.1', FOLIO_PORT: '0', FOLIO_DATA_DIR: launch.dataDir, FOLIO_SECRET_KEY: launch.secretKey,
    FOLIO_TOKENIZATION_SECRET: launch.tokenizationSecret, FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS: launch.hooksAllowPrivateNetworks ? 'true' : 'false',
    FOLIO_LOG_LEVEL: launch.logLevel, FOLIO_STOP_ON_STDIN_END: '1',
  });
  if (launch.followDataDir) env.FOLIO_FOLLOW_DATA_DIR = launch.followDataDir;
  return nodeEnvironment(env);
}

export class CoreProcess {
  readonly exited: Promise<number | string>;
  private readonly stderrLines: string[] = [];

  private constructor(private readonly child: ChildProcess, readonly url: string, exited: Promise<number | string>, stderrLines: string[]) {
    this.exited = exited;
    this.stderrLines = stderrLines;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The end of the core's stderr, for reports. */
  stderrTail(): string {
    return this.stderrLines.join('\n');
  }

  /** Spawns the core and resolves once it listens; rejects (the child killed) if it exits or takes too long. */
  static async start(launch: CoreLaunch, options: { timeoutMs: number; label: string; logger: CoreLogger }): Promise<CoreProcess> {
    fs.mkdirSync(launch.dataDir, { recursive: true, mode: 0o700 });
    const child = spawn(process.execPath, [...NODE_FLAGS, folioEntryFile(), 'serve'], {
      cwd: launch.dataDir, env: childEnvironment(launch), stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stderrLines: string[] = [];
    let partial = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        stderrLines.push(line);
        if (stderrLines.length > STDERR_LINES_KEPT) stderrLines.shift();
        options.logger.warn({ core: options.label, pid: child.pid }, line.slice(0, 2000));
      }
    });
    child.stdin?.on('error', () => undefined); // the pipe breaks when the core exits; nothing to do
    const exited = new Promise<number | string>((resolve) => {
      child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
      child.on('error', () => resolve('spawn failed'));
    });
    try {
      const url = await readAddress(child, exited, options.timeoutMs);
      return new CoreProcess(child, url, exited, stderrLines);
    } catch (error) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`${(error as Error).message}${stderrLines.length > 0 ? `; stderr ends:\n${stderrLines.join('\n')}` : ''}`);
    }
  }

  /** SIGTERM (the core drains and flushes), then SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs: number): Promise<number | string> {
    if (this.running) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const how = await this.exited;
    clearTimeout(timer);
    return how;
  }

  /** Ends it at once (a core that failed its checks). */
  kill(): Promise<number | string> {
    if (this.running) this.child.kill('SIGKILL');
    return this.exited;
  }
}

function readAddress(child: ChildProcess, exited: Promise<number | string>, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`the core did not listen within ${timeoutMs} ms`)), timeoutMs);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (text: string) => {
      stdout = (stdout + text).slice(-4096);
      const match = LISTENING.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`the core exited (${how}) before it listened`));
    });
  });
}
