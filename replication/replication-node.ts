// A node of a replicated group (docs/decisions-replication.md). Every node starts as a standby: it
// aligns its local log with the group's (log-alignment.ts), opens its ledger as a follower, and tails
// the group's log (standby-tail.ts). A lease loop reads the lease every `watch_every_ms`; when the lease
// is free by the database's clock and this node has applied the whole log as last read, it tries to take
// the next term (replication/lease-rules.ts). The node that gets it reads to the end of the log, installs
// the replicator (each sealed record is committed in PostgreSQL, term checked, before it counts as
// durable), starts the ledger's own work and takes writes. It renews every `renew_every_ms` and stops
// on its own clock when its lease runs out (leaderDeadline), whether or not it can reach anyone.
//
// A leader that loses the lead (a renewal refused, its deadline passed, an append refused or failed)
// steps down: the log stops appending and refuses every waiter (REPL_NOT_LEADER), the API answers 503
// REPL_REJOINING, the ledger is closed once the requests under way have ended, and the node joins again
// as a standby, dropping on the way any record it sealed as leader that the group never committed (the
// log is marked as the leader's when the lead is taken: wal/leader-seals.ts). A standby whose tail meets
// a record that does not fit its log rejoins the same way. Joining retries until PostgreSQL answers; a
// local log that cannot be aligned without losing history, or holding records the node did not seal as
// leader, stops the process (an operator's call). The data directory is marked a member of the group
// (runtime/data-dir-membership.ts) once its log is aligned, so it is never served alone by mistake.
//
// The work is split so that nothing slow holds up the lease: renewals and watches run in one loop on
// their own connection, role changes (promotion, rejoining) run one at a time beside it, and every
// role change bumps an epoch that the others check after each await.

import crypto from 'node:crypto';
import { NodeRefusal } from '../http/ports/node-refusal.js';
import { SealError } from '../hooks/signing-secrets.js';
import { DataDirLockedError } from '../runtime/data-dir-lock.js';
import type { ReplicationInspection, ReplicationPort, ReplicationStatus, WriteTarget } from '../http/ports/replication-port.js';
import { leaderDeadline, mayTakeLease } from './lease-rules.js';
import { readLease, releaseLease, renewLease, reportNode, takeLease, type LeaseView } from './postgres/lease-store.js';
import { connectPostgres, dropClient, type ConnectionLimits, type PostgresClient } from './postgres/postgres-client.js';
import { readGroupStatus, type GroupStatus } from './postgres/group-status.js';
import { logEnd } from './postgres/postgres-log-store.js';
import { ensureSchema, SchemaVersionError } from './postgres/replication-schema.js';
import { readHookProgress } from './postgres/group-settings-store.js';
import type { OutboxCursor } from '../hooks/outbox-store.js';
import { checkSealKey, SealKeyError } from './group-membership.js';
import { newNodeId, readNodeId, recordMembership } from '../runtime/data-dir-membership.js';
import { HookProgressPublisher } from './hook-progress-publisher.js';
import { uploadLog } from './log-upload.js';
import type { ReplicationSettings } from './replication-settings.js';
import { CorruptRecordError } from '../wal/log-record-codec.js';
import { AcknowledgedAloneError, alignWithGroup, DivergedLogError } from './log-alignment.js';
import type { LedgerRuntime } from '../runtime/ledger-runtime.js';
import type { MonotonicClock } from '../runtime/system-clock.js';
import { notLeader, PostgresRecordReplicator } from './record-replicator.js';
import { NotApplied, StandbyTail } from './standby-tail.js';

/** What the node needs from the process that runs it (server/replicated-serve.ts). */
export interface ReplicationHost {
  dataDir: string;
  /**
   * Opens the ledger as a follower, with `beforeOpen` run under the data directory's lock, and hook
   * delivery's saved cursors handed to `onHookProgress` (once it leads).
   */
  openRuntime(options: { beforeOpen: () => Promise<void>; onHookProgress: (cursor: OutboxCursor) => void }): Promise<LedgerRuntime>;
  /** Serves the API from this ledger (a new app); returns what holds its own appenders (API key uses). */
  serve(runtime: LedgerRuntime, node: ReplicationNode): { holdWrites(): void; releaseWrites(): void };
  /** Refuses every request with `refusal` and waits (bounded) for those under way. */
  unavailable(refusal: NodeRefusal): Promise<void>;
  logger: NodeLogger;
  /**
   * The monotonic clock the lease is measured on (runtime/system-clock.ts monotonicClock: performance.now(),
   * which only a test can skew).
   */
  clock: MonotonicClock;
  /** The node cannot go on (a log that cannot be aligned, a database of another version). */
  fatal(error: Error): void;
}

export interface NodeLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

type Phase = 'joining' | 'standby' | 'promoting' | 'leader' | 'rejoining' | 'stopped';

interface Held {
  term: number;
  /** The host's clock's time past which this node no longer acts as leader. */
  deadline: number;
}

/** How long one read of the group (groupStatus) answers every request that asks for it. */
const GROUP_STATUS_FRESH_MS = 1_000;

const REJOINING = new NodeRefusal('REPL_REJOINING');

export class ReplicationNode implements ReplicationPort {
  private phase: Phase = 'joining';
  private runtime: LedgerRuntime | undefined;
  private served: { holdWrites(): void; releaseWrites(): void } | undefined;
  private tail: StandbyTail | undefined;
  private leaseClient: PostgresClient | undefined;
  private appendClient: PostgresClient | undefined;
  /** Reads of the whole group for operators (groupStatus), on a connection of their own: never the lease's. */
  private statusClient: PostgresClient | undefined;
  private groupRead: { at: number; answer: Promise<GroupStatus> } | undefined;
  private replicator: PostgresRecordReplicator | undefined;
  private held: Held | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private lease: LeaseView | undefined;
  private epoch = 0;
  private transitions: Promise<void> = Promise.resolve();
  private loopTimer: NodeJS.Timeout | undefined;
  private lastReportAt = 0;
  private lastAppliedSeq = 0;
  private schemaReady = false;
  private readonly hookProgress: HookProgressPublisher;
  readonly incarnation: string;
  private readonly nodeId: string;

  private constructor(private readonly settings: ReplicationSettings, private readonly host: ReplicationHost) {
    this.hookProgress = new HookProgressPublisher(host.logger);
    // Kept in the data directory once the node has joined (recordMembership): the same node across restarts.
    this.nodeId = readNodeId(host.dataDir) ?? newNodeId();
    this.incarnation = `${settings.node_name}/${this.nodeId}/${crypto.randomBytes(6).toString('hex')}`;
  }

  /** Joins the group (retrying until PostgreSQL answers) and starts the lease loop. */
  static async start(settings: ReplicationSettings, host: ReplicationHost): Promise<ReplicationNode> {
    const node = new ReplicationNode(settings, host);
    await node.join(node.epoch);
    node.loop();
    return node;
  }

  // --- what the API sees ---

  status(): ReplicationStatus {
    const status: ReplicationStatus = {
      role: this.phase === 'leader' ? 'leader' : 'standby',
      term: Math.max(this.lease?.term ?? 0, this.held?.term ?? 0),
      applied_seq: this.appliedSeq(),
    };
    if (status.role === 'standby') {
      const leader = this.liveLeader();
      if (leader) status.leader = leader;
      status.lag_ms = Math.round((this.tail?.lagMs ?? 0) * 10) / 10;
    }
    return status;
  }

  writeTarget(): WriteTarget {
    if (this.leading()) return { kind: 'here' };
    const leader = this.liveLeader();
    return leader ? { kind: 'leader', url: leader.url } : { kind: 'none' };
  }

  /** For the status route: this node's phase, the lease as last read and the tail's lag percentiles. */
  details(lagWindowMs?: number): Omit<ReplicationInspection, keyof ReplicationStatus> {
    const details: Omit<ReplicationInspection, keyof ReplicationStatus> = { node: this.settings.node_name, phase: this.phase };
    if (this.lease) {
      details.lease = {
        term: this.lease.term, holder: this.lease.holder_name, url: this.lease.holder_url,
        expires_in_ms: Math.round(this.lease.expires_at_ms - this.lease.database_now_ms),
      };
    }
    if (this.tail) details.lag_percentiles_ms = this.tail.lagPercentiles(lagWindowMs);
    return details;
  }

  /**
   * The group as PostgreSQL holds it (GET /admin/replication?group=true): one read at a time on a
   * connection of its own, shared by every request within GROUP_STATUS_FRESH_MS, so operators polling
   * it cost the database at most one read of three small tables a second and never delay the lease loop.
   */
  groupStatus(): Promise<GroupStatus> {
    const now = this.host.clock.now();
    const read = this.groupRead;
    if (read && now - read.at < GROUP_STATUS_FRESH_MS) return read.answer;
    const answer = (async () => {
      try {
        this.statusClient ??= await this.connect('status', this.settings.connection, () => {
          this.statusClient = undefined;
        });
        return await readGroupStatus(this.statusClient);
      } catch (error) {
        dropClient(this.statusClient);
        this.statusClient = undefined;
        this.groupRead = undefined;
        throw error;
      }
    })();
    this.groupRead = { at: now, answer };
    return answer;
  }

  /** The host clock's time this node leads until, while it leads (an HTTP worker takes writes only until then). */
  leadingUntilMs(): number | undefined {
    return this.leading() ? this.held?.deadline : undefined;
  }

  private leading(): boolean {
    return this.phase === 'leader' && this.held !== undefined && this.host.clock.now() < this.held.deadline;
  }

  private appliedSeq(): number {
    if (this.runtime) this.lastAppliedSeq = this.runtime.log.appendedSeq;
    return this.lastAppliedSeq;
  }

  /** The leader the lease names while it is live, unless that is this node. */
  private liveLeader(): { name: string; url: string } | undefined {
    const lease = this.lease;
    if (!lease || lease.holder === '' || lease.holder === this.incarnation || lease.holder_url === '') return undefined;
    if (lease.expires_at_ms <= lease.database_now_ms) return undefined;
    return { name: lease.holder_name, url: lease.holder_url };
  }

  // --- joining ---

  private async join(epoch: number): Promise<void> {
    for (;;) {
      if (epoch !== this.epoch || this.phase === 'stopped') return;
      let client: PostgresClient | undefined;
      try {
        client = await this.connect('join', this.settings.connection);
        if (!this.schemaReady) {
          await ensureSchema(client);
          this.schemaReady = true;
        }
        const opened = client;
        const runtime = await this.host.openRuntime({
          beforeOpen: async () => {
            await checkSealKey(opened, this.host.dataDir);
            const alignment = await alignWithGroup(this.host.dataDir, opened, this.settings.records_dropped_max);
            if (alignment.records_dropped > 0 || alignment.seeding) this.host.logger.warn({ ...alignment }, 'local log aligned with the group');
            // From here the directory holds the group's history: it never opens alone again (data-dir-membership.ts).
            recordMembership(this.host.dataDir, this.nodeId);
          },
          onHookProgress: (cursor) => this.hookProgressSaved(cursor),
        });
        dropClient(client);
        this.becomeStandby(runtime);
        return;
      } catch (error) {
        dropClient(client);
        if (joinCannotSucceed(error)) {
          this.phase = 'stopped';
          this.host.fatal(error as Error);
          return;
        }
        this.host.logger.warn({ err: (error as Error).message }, 'cannot join the replication group yet; retrying');
        await sleep(this.settings.join_retry_ms);
      }
    }
  }

  /** The leader's hook delivery got further: published, under this node's term. */
  private hookProgressSaved(cursor: OutboxCursor): void {
    if ((this.phase !== 'leader' && this.phase !== 'promoting') || !this.held || !this.appendClient) return;
    this.hookProgress.publish(this.appendClient, this.held.term, cursor);
  }

  private becomeStandby(runtime: LedgerRuntime): void {
    this.runtime = runtime;
    this.lastAppliedSeq = runtime.log.appendedSeq;
    runtime.startSnapshots();
    const epoch = this.epoch;
    runtime.log.onReplicationLost((error) => this.stepDown(epoch, `an append was not committed (${this.replicator?.cause?.message ?? error.message})`));
    this.tail = new StandbyTail(
      runtime, () => this.connect('tail', this.settings.connection), this.settings.tail,
      (error) => this.diverged(epoch, error),
      (error) => {
        if (epoch !== this.epoch) return; // the log was stopped by a step-down, not by the record
        this.phase = 'stopped';
        this.host.fatal(error);
      },
    );
    this.served = this.host.serve(runtime, this);
    this.served.holdWrites();
    this.phase = 'standby';
    this.tail.start();
    this.host.logger.info({ node: this.settings.node_name, seq: runtime.log.appendedSeq }, 'joined the replication group as a standby');
  }

  private diverged(epoch: number, error: CorruptRecordError): void {
    this.host.logger.error({ err: error.message }, "a record of the group's log does not fit the local log; rejoining");
    this.stepDown(epoch, 'the tail met a record that does not fit');
  }

  // --- the lease loop ---

  private loop(): void {
    const started = this.host.clock.now();
    void this.tick().catch((error: unknown) => {
      this.host.logger.warn({ err: (error as Error).message }, 'lease loop');
    }).finally(() => {
      if (this.phase === 'stopped') return;
      const every = this.held ? this.settings.timings.renew_every_ms : this.settings.watch_every_ms;
      this.loopTimer = setTimeout(() => this.loop(), Math.max(0, every - (this.host.clock.now() - started)));
    });
  }

  private async tick(): Promise<void> {
    try {
      if (this.held) await this.renew(this.held);
      else await this.watch();
      if (this.host.clock.now() - this.lastReportAt >= this.settings.report_every_ms) await this.report();
    } catch (error) {
      // The lease connection is dropped and opened again on the next tick; a leader's deadline stands.
      dropClient(this.leaseClient);
      this.leaseClient = undefined;
      throw error;
    }
  }

  private async leaseConnection(): Promise<PostgresClient> {
    this.leaseClient ??= await this.connect('lease', this.settings.lease_connection, () => {
      this.leaseClient = undefined;
    });
    return this.leaseClient;
  }

  private async renew(held: Held): Promise<void> {
    const client = await this.leaseConnection();
    const sentAt = this.host.clock.now();
    const renewed = await renewLease(client, held.term, this.incarnation, this.settings.timings.lease_ms);
    if (held !== this.held) return;
    if (!renewed) {
      this.stepDown(this.epoch, `term ${held.term} is no longer this node's`);
      return;
    }
    this.armDeadline(held, leaderDeadline(sentAt, this.settings.timings));
  }

  private async watch(): Promise<void> {
    const client = await this.leaseConnection();
    const lease = await readLease(client);
    this.lease = lease;
    const runtime = this.runtime;
    const tail = this.tail;
    if (this.phase !== 'standby' || !runtime || !tail) return;
    const candidate = { lease, database_now_ms: lease.database_now_ms, applied_seq: runtime.log.appendedSeq, log_end_seq: tail.groupEndSeq };
    if (!mayTakeLease(candidate)) return;
    const epoch = this.epoch;
    const sentAt = this.host.clock.now();
    const term = await takeLease(client, lease.term, { holder: this.incarnation, name: this.settings.node_name, url: this.settings.advertise_url }, this.settings.timings.lease_ms);
    if (term === undefined) return;
    if (epoch !== this.epoch || this.phase !== 'standby') {
      // The node began to rejoin meanwhile: the term it took is given straight back.
      await releaseLease(client, term, this.incarnation).catch(() => undefined);
      return;
    }
    const held: Held = { term, deadline: 0 };
    this.held = held;
    this.armDeadline(held, leaderDeadline(sentAt, this.settings.timings));
    this.host.logger.info({ term, seq: runtime.log.appendedSeq }, 'took the lease; taking the lead');
    this.phase = 'promoting';
    this.transition(() => this.promote(epoch, held));
  }

  private armDeadline(held: Held, deadline: number): void {
    held.deadline = deadline;
    clearTimeout(this.deadlineTimer);
    // Timers run on real time and the clock may run slower (a test's skew): a timer that fires before the
    // clock reaches the deadline is armed again for the rest.
    const expire = (): void => {
      if (this.held !== held) return;
      const left = held.deadline - this.host.clock.now();
      if (left > 0) this.deadlineTimer = setTimeout(expire, left);
      else this.stepDown(this.epoch, `the lease of term ${held.term} ran out before it could be renewed`);
    };
    this.deadlineTimer = setTimeout(expire, Math.max(0, deadline - this.host.clock.now()));
  }

  private async report(): Promise<void> {
    const client = await this.leaseConnection();
    if (this.held) this.lease = await readLease(client); // a standby reads it on every watch
    const status = this.status();
    await reportNode(client, {
      name: this.settings.node_name,
      incarnation: this.nodeId,
      role: this.phase === 'leader' ? 'leader' : this.phase === 'rejoining' || this.phase === 'joining' ? 'rejoining' : 'standby',
      term: status.term,
      applied_seq: status.applied_seq,
      lag_ms: status.lag_ms,
      url: this.settings.advertise_url,
    });
    this.lastReportAt = this.host.clock.now();
  }

  // --- taking the lead ---

  private async promote(epoch: number, held: Held): Promise<void> {
    const runtime = this.runtime;
    const tail = this.tail;
    if (!runtime || !tail || epoch !== this.epoch) return;
    try {
      await tail.stop();
      // No record of an older term can land from here on: this reads the last of them.
      await tail.catchUp();
      if (epoch !== this.epoch) return;
      const client = await this.connect('append', this.settings.connection, (error) => this.replicator?.stop(error), true);
      this.appendClient = client;
      const end = await logEnd(client);
      const groupEnd = end?.last_seq ?? 0;
      if (groupEnd > runtime.log.appendedSeq) throw new Error(`the group's log reaches seq ${groupEnd}, this node only ${runtime.log.appendedSeq}`);
      let previousFirstSeq = end?.first_seq ?? 0;
      if (groupEnd < runtime.log.appendedSeq) {
        if (groupEnd !== 0) throw new Error(`this node's log runs past the group's (seq ${runtime.log.appendedSeq} against ${groupEnd})`);
        previousFirstSeq = await uploadLog(runtime.log, client, held.term, this.settings.seed_records_per_batch);
        this.host.logger.warn({ seq: runtime.log.appendedSeq }, "uploaded this node's log to the empty group");
      }
      // The local log is the group's now, record for record: what it seals from here on, until the group
      // commits it, is this leader's and may be dropped if this node loses the lead (log-alignment.ts).
      await runtime.log.sealAsLeader();
      if (epoch !== this.epoch) return;
      this.replicator = new PostgresRecordReplicator(client, held.term, previousFirstSeq);
      runtime.log.replicateTo(this.replicator);
      // Hook delivery resumes where the group's last leader had got to (deliveries may repeat, never skip).
      const progress = await readHookProgress(client);
      if (progress) await runtime.resetHookProgress({ low_seq: progress.low_seq, hooks: JSON.parse(progress.hooks) as OutboxCursor['hooks'] });
      if (epoch !== this.epoch) return;
      await runtime.startWork();
      if (epoch !== this.epoch) return;
      const genesis = runtime.run({ op: 'genesis.ensure' });
      if (genesis.ok) await runtime.durable(genesis.seq);
      if (epoch !== this.epoch) return;
      this.served?.releaseWrites();
      this.phase = 'leader';
      this.host.logger.info({ term: held.term, seq: runtime.log.appendedSeq }, 'leading the replication group');
    } catch (error) {
      // Stepped down meanwhile (the lease ran out while it caught up): the step-down stopped the log, so
      // the record being copied was refused for that, not for itself. The rejoin copies it again; a record
      // that truly cannot be applied stops the node then, from the standby's tail (nemesis seed 5151;
      // test/replication-promotion-stall.int.test.ts).
      if (epoch !== this.epoch) {
        this.host.logger.warn({ err: (error as Error).message }, 'taking the lead stopped: this node stepped down meanwhile');
        return;
      }
      if (error instanceof NotApplied) {
        this.phase = 'stopped';
        this.host.fatal(error);
        return;
      }
      this.host.logger.error({ err: (error as Error).message }, 'taking the lead failed');
      this.stepDown(epoch, 'taking the lead failed');
    }
  }

  // --- stepping down and rejoining ---

  private stepDown(epoch: number, reason: string): void {
    if (epoch !== this.epoch || this.phase === 'stopped' || this.phase === 'rejoining') return;
    this.epoch += 1;
    const wasLeading = this.held !== undefined;
    this.held = undefined;
    clearTimeout(this.deadlineTimer);
    this.phase = 'rejoining';
    this.host.logger.warn({ reason, leading: wasLeading }, 'stepping down; rejoining the group as a standby');
    this.replicator?.stop(new Error(reason));
    this.runtime?.log.stopAppending(notLeader());
    const next = this.epoch;
    this.transition(() => this.rejoin(next));
  }

  private async rejoin(epoch: number): Promise<void> {
    this.served?.holdWrites();
    this.served = undefined;
    await this.tail?.stop();
    this.tail = undefined;
    dropClient(this.appendClient);
    this.appendClient = undefined;
    this.replicator = undefined;
    // Reads waiting for a seq are answered now (503 to retry), not held until their time is up: the HTTP
    // side waits for what is under way before the ledger closes.
    this.runtime?.releaseSeqWaiters();
    await this.host.unavailable(REJOINING);
    const runtime = this.runtime;
    this.runtime = undefined;
    await runtime?.close().catch((error: unknown) => this.host.logger.error({ err: (error as Error).message }, 'closing the ledger to rejoin'));
    await this.join(epoch);
  }

  private transition(work: () => Promise<void>): void {
    this.transitions = this.transitions.then(work, work).catch((error: unknown) => {
      this.host.logger.error({ err: (error as Error).message }, 'replication role change failed');
    });
  }

  /** Stops the node: gives the lease up if it leads, closes its connections. The ledger is the host's to close. */
  async stop(): Promise<LedgerRuntime | undefined> {
    const wasHeld = this.held;
    this.phase = 'stopped';
    this.epoch += 1;
    clearTimeout(this.loopTimer);
    clearTimeout(this.deadlineTimer);
    await this.transitions;
    await this.tail?.stop();
    const runtime = this.runtime;
    this.runtime = undefined;
    if (runtime && wasHeld) {
      // What was appended is committed (or refused) before the lease goes.
      await runtime.log.flush().catch(() => undefined);
      try {
        await releaseLease(await this.leaseConnection(), wasHeld.term, this.incarnation);
      } catch (error) {
        this.host.logger.warn({ err: (error as Error).message }, 'could not give the lease up; it will run out');
      }
    }
    this.held = undefined;
    dropClient(this.leaseClient);
    dropClient(this.appendClient);
    dropClient(this.statusClient);
    this.statusClient = undefined;
    return runtime;
  }

  private connect(purpose: string, limits: ConnectionLimits, onBroken?: (error: Error) => void, pipeline = false): Promise<PostgresClient> {
    return connectPostgres({
      url: this.settings.postgres_url,
      limits,
      application_name: `folio ${this.settings.node_name} ${purpose}`,
      pipeline,
      onBroken,
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A failure to join that retrying cannot mend: an operator must act (the node stops, saying why). */
function joinCannotSucceed(error: unknown): boolean {
  return error instanceof DivergedLogError || error instanceof AcknowledgedAloneError || error instanceof SchemaVersionError
    || error instanceof SealKeyError || error instanceof DataDirLockedError || error instanceof CorruptRecordError || error instanceof SealError;
}
