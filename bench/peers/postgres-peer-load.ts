// The Postgres side of the peers bench: a throwaway PostgreSQL with the peer's schema, its balance sets
// created and funded through the peer's own batch function, and closed-loop loads driven directly with
// pg from this process (no HTTP in front of it): one connection per client, opened as a load first
// needs them and reused by the loads after it. The peer behind Koa (bench/bare-koa-server.ts) opens
// its own pool to the same server, so the server admits both at their widest.

import { PeerLedger, type PeerTransfer } from '../postgres-peer/peer-ledger.js';
import { startPostgres, type RunningPostgres } from '../postgres/postgres-server.js';
import { processTreeCpuMicros, waitUntilIdle, type IdleWait } from '../process-cpu.js';
import { runClosedLoop, type ClosedLoopResult } from './closed-loop.js';
import { balanceNames, CURRENCY, FUNDING, FUNDING_BATCH, pairSource, SWEEP_CONNECTIONS, WORLD, type PeerLoad } from './peer-workloads.js';

/** The most clients of any load: each has a connection of its own, directly or in the pool behind Koa. */
export const PEER_CLIENTS_MAX = Math.max(...SWEEP_CONNECTIONS);
/** Both sides' connections at their widest, plus a few for the bench's own (funding, checks) and PostgreSQL's. */
const MAX_CONNECTIONS = 2 * PEER_CLIENTS_MAX + 20;

export interface PostgresPeerLoad extends ClosedLoopResult {
  transfersPerSecond: number;
}

function transfer(source: string, destination: string, amount: bigint, allowOverdraft: boolean): PeerTransfer {
  return { reference: '', source, destination, amount, currency: CURRENCY, allowOverdraft };
}

export class PostgresPeerRig {
  private readonly connections: PeerLedger[] = [];

  private constructor(readonly server: RunningPostgres) {}

  static async start(): Promise<PostgresPeerRig> {
    const server = await startPostgres({ label: 'peers-postgres', settings: { max_connections: String(MAX_CONNECTIONS) } });
    const rig = new PostgresPeerRig(server);
    try {
      const [admin] = await rig.connected(1);
      await admin!.install();
      await admin!.createBalances([WORLD], CURRENCY);
      return rig;
    } catch (error) {
      await rig.stop();
      throw error;
    }
  }

  /** Creates the set's balances and funds each from the world balance, in batches of the peer's own. */
  async fund(balances: number): Promise<void> {
    const [admin] = await this.connected(1);
    const names = balanceNames(balances);
    await admin!.createBalances(names, CURRENCY);
    for (let start = 0; start < names.length; start += FUNDING_BATCH) {
      const batch = names.slice(start, start + FUNDING_BATCH).map((name) => transfer(WORLD, name, FUNDING, true));
      const outcome = await admin!.transferBatch(batch, CURRENCY);
      if (!outcome.ok) throw new Error(`funding refused: ${outcome.code} at ${outcome.index}`);
    }
  }

  /** After the bulk loading: vacuum and analyze (as autovacuum soon would), then a checkpoint, so neither falls inside a measurement. */
  async settle(): Promise<void> {
    const [admin] = await this.connected(1);
    await admin!.maintain();
  }

  /** A closed loop of `load.clients` clients, each on a connection of its own, for a warm-up and then `seconds`. */
  async load(load: PeerLoad, warmupSeconds: number, seconds: number): Promise<PostgresPeerLoad> {
    const { workload, clients } = load;
    const ledgers = await this.connected(clients);
    const pairs = ledgers.map((_, client) => pairSource(workload, load.balances, 1 + client));
    const loop = await runClosedLoop({
      clients, warmupSeconds, seconds,
      async operation(client) {
        const next = pairs[client]!;
        const ledger = ledgers[client]!;
        const items = Array.from({ length: workload.batch }, () => {
          const { source, destination } = next();
          return transfer(source, destination, 1n, false);
        });
        const outcome = workload.batch === 1 ? await ledger.transfer(items[0]!) : await ledger.transferBatch(items, CURRENCY);
        if (!outcome.ok) throw new Error(`peer refused: ${outcome.code} at ${outcome.index}`);
      },
    });
    return { ...loop, transfersPerSecond: (loop.operations * workload.batch) / seconds };
  }

  /** Waits until PostgreSQL (the postmaster and every backend and helper process) is idle; false if it was not by the end of the wait. */
  idle(wait: IdleWait): Promise<boolean> {
    return waitUntilIdle(() => processTreeCpuMicros(this.server.pid), wait);
  }

  /** Checks the ledger's invariant after the loads: each currency's balances sum to zero. */
  async sumsToZero(): Promise<boolean> {
    const [admin] = await this.connected(1);
    const sums = await admin!.sums();
    return [...sums.values()].every((sum) => sum.balance === 0n && sum.creditsLessDebits === 0n);
  }

  async stop(): Promise<void> {
    const open = this.connections.splice(0);
    await Promise.allSettled(open.map((ledger) => ledger.close()));
    await this.server.stop();
  }

  private async connected(count: number): Promise<PeerLedger[]> {
    while (this.connections.length < count) {
      const missing = Math.min(32, count - this.connections.length);
      this.connections.push(...await Promise.all(Array.from({ length: missing }, () => PeerLedger.connect(this.server.connection))));
    }
    return this.connections.slice(0, count);
  }
}
