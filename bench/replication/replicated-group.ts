// A replicated group for tests and the replication bench: one throwaway PostgreSQL
// (bench/postgres/postgres-server.ts) and N real `folio serve` processes (the built CLI) joined to it,
// each on 127.0.0.1 with its own data directory. Nodes can be killed (SIGKILL), stopped (SIGTERM) and
// started again on the same directory; `waitForLeader` and friends poll /health until a condition holds
// (never a fixed sleep), each bounded. A node's PostgreSQL URL can be given per node, so a test can put
// a TCP relay between one node and the database. Everything is registered with bench/resources.ts and
// removed however the run ends.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from '../../threads/node-flags.js';
import { startPostgres, type RunningPostgres } from '../postgres/postgres-server.js';
import { makeTempDir, removeTempDir, spawnChild, waitForOutput, LISTENING_LINE, type Child } from '../resources.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The built CLI: beside this module when it runs from dist/, under dist/ when a test runs it from source. */
const CLI = [path.resolve(HERE, '../../bin/folio.js'), path.resolve(HERE, '../../dist/bin/folio.js')].find((file) => fs.existsSync(file))
  ?? path.resolve(HERE, '../../dist/bin/folio.js');
const POLL_MS = 25;

export interface NodeHealth {
  status: string;
  role: 'leader' | 'standby' | 'single';
  term: number;
  applied_seq: number;
  leader?: { name: string; url: string };
  lag_ms?: number;
}

export interface GroupNode {
  name: string;
  dataDir: string;
  child?: Child;
  url?: string;
  /** Everything this node wrote to stderr, over all its runs. */
  stderr: string;
  /** The database URL this node is given (a relay's, for a test that cuts it off). */
  postgresUrl: string;
  /** A port kept across restarts (clients and redirects keep working); 0 or absent: a new one each start. */
  port?: number;
  /** Environment for this node only, over the group's. */
  env?: Record<string, string>;
}

export interface GroupOptions {
  nodes: number;
  label: string;
  /** Environment for every node (FOLIO_SECRET_KEY, FOLIO_LOG_LEVEL, ...). */
  env?: Record<string, string>;
  leaseMs?: number;
  /** Start the nodes at once (false: only the first; the test starts the others). */
  startAll?: boolean;
  postgresSettings?: Record<string, string>;
  /** Where PostgreSQL's files go (PostgresOptions.parentDir); the nodes' stay in the OS temp dir. */
  postgresParentDir?: string;
}

export class ReplicatedGroup {
  /**
   * The hook sealing key every node of the group is configured with, as an operator does (hooks.seal_key);
   * a test turning an existing ledger into a group sets it to that ledger's key.
   */
  sealKey = crypto.randomBytes(32).toString('hex');

  private constructor(readonly postgres: RunningPostgres, readonly nodes: GroupNode[], private readonly options: GroupOptions, private readonly root: string) {}

  /** PostgreSQL, then the first node (which takes the first term), then the others. */
  static async start(options: GroupOptions): Promise<ReplicatedGroup> {
    const postgres = await startPostgres({ label: `${options.label}-pg`, settings: { max_connections: '60', shared_buffers: '32MB', ...options.postgresSettings }, parentDir: options.postgresParentDir });
    const root = makeTempDir(options.label);
    const nodes: GroupNode[] = Array.from({ length: options.nodes }, (_, index) => ({
      name: `node-${String.fromCharCode(97 + index)}`, dataDir: path.join(root, `node-${index}`), stderr: '', postgresUrl: postgres.url,
    }));
    const group = new ReplicatedGroup(postgres, nodes, options, root);
    try {
      if (options.startAll !== false) {
        await group.startNode(nodes[0]!);
        await group.waitForLeader(60_000);
        for (const node of nodes.slice(1)) await group.startNode(node);
      }
    } catch (error) {
      await group.stop();
      throw error;
    }
    return group;
  }

  /** Starts (or starts again) a node on its data directory and waits until it listens. */
  async startNode(node: GroupNode, env: Record<string, string> = {}): Promise<void> {
    if (node.child && node.child.process.exitCode === null && node.child.process.signalCode === null) throw new Error(`${node.name} is running`);
    const child = spawnChild(process.execPath, [...NODE_FLAGS, CLI, 'serve'], {
      env: {
        ...process.env,
        FOLIO_PORT: String(node.port ?? 0), FOLIO_HOST: '127.0.0.1', FOLIO_DATA_DIR: node.dataDir, FOLIO_LOG_LEVEL: 'warn',
        FOLIO_REPLICATION_URL: node.postgresUrl, FOLIO_NODE_NAME: node.name, FOLIO_HOOK_SEAL_KEY: this.sealKey,
        ...(this.options.leaseMs ? { FOLIO_REPLICATION_LEASE_MS: String(this.options.leaseMs) } : {}),
        ...this.options.env, ...node.env, ...env,
      },
    });
    child.process.stderr?.on('data', (chunk: Buffer) => {
      node.stderr += chunk.toString();
    });
    node.child = child;
    node.url = (await waitForOutput(child, LISTENING_LINE, 60_000))[1];
  }

  isRunning(node: GroupNode): boolean {
    const process = node.child?.process;
    return process !== undefined && process.exitCode === null && process.signalCode === null;
  }

  /** SIGKILL: no handler runs, nothing is flushed or given up. */
  async kill(node: GroupNode): Promise<void> {
    if (!node.child || !this.isRunning(node)) return;
    node.child.process.kill('SIGKILL');
    await node.child.exited;
  }

  /** SIGTERM and wait for the exit code. */
  async terminate(node: GroupNode): Promise<number | string | undefined> {
    if (!node.child || !this.isRunning(node)) return undefined;
    return node.child.stop(30_000);
  }

  /** The node's /health, or undefined when it does not answer 200. */
  async health(node: GroupNode): Promise<NodeHealth | undefined> {
    if (!node.url || !this.isRunning(node)) return undefined;
    try {
      const response = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(2_000) });
      if (response.status !== 200) return undefined;
      return await response.json() as NodeHealth;
    } catch {
      return undefined;
    }
  }

  /** Polls until `check` returns a value (not undefined), at most `timeoutMs`. */
  async waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${this.describe()}`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** The running node that says it leads (and, if given, not `other`). */
  waitForLeader(timeoutMs: number, other?: GroupNode): Promise<GroupNode> {
    return this.waitFor('a leader', timeoutMs, async () => {
      for (const node of this.nodes) {
        if (node === other) continue;
        if ((await this.health(node))?.role === 'leader') return node;
      }
      return undefined;
    });
  }

  /** Waits until the node answers as a standby (of a live leader). */
  waitForStandby(node: GroupNode, timeoutMs: number): Promise<NodeHealth> {
    return this.waitFor(`${node.name} a standby`, timeoutMs, async () => {
      const health = await this.health(node);
      return health?.role === 'standby' && health.leader ? health : undefined;
    });
  }

  /** A line per node: running or not, and its stderr's last lines (for failure messages). */
  describe(): string {
    return this.nodes.map((node) => `${node.name} (${this.isRunning(node) ? 'running' : 'stopped'}) ${node.url ?? ''}:\n${node.stderr.split('\n').slice(-8).join('\n')}`).join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.kill(node)));
    await this.postgres.stop();
    removeTempDir(this.root);
  }
}
