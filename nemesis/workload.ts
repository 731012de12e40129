// The nemesis's clients: a steady mix of writes from several clients, each in its own loop, as careful
// clients of a replicated group write (every write carries a reference; a write is resent with the same
// body until it gets a definite answer or the client's patience runs out; a 307 is followed to the
// leader; a 503 or a dead connection sends the client to another node). Every attempt and its answer are
// recorded (nemesis/history.ts), so the checker can hold each write's outcome against the group's log.
//
// The mix: single transfers (some without overdraft, which a short balance refuses), atomic bulk batches
// (a few with a reference twice, which is refused whole), holds and then their commit or void, a void
// sent to a hold whose commit was acknowledged (which must be refused), refunds of acknowledged
// transfers, and reads of acknowledged writes on any node with their X-Folio-Seq (which must see them).
// Each client draws from its own seeded source: the seed fixes what each client tries, in which order;
// the answers it gets (and so the holds it may act on) depend on the run.

import { call, type Answer } from '../bench/replication/group-client.js';
import type { Attempt, History, ReadOp, WriteKind, WriteOp } from './history.js';
import { Seeded } from './seeded.js';

export interface WorkloadOptions {
  seed: number;
  clients: number;
  /** How long one request may take before it counts as lost. */
  request_timeout_ms: number;
  /** How long a client keeps resending one write before it gives up (its outcome stays unknown). */
  patience_ms: number;
}

/** Where the nodes are: their names and the addresses (kept across restarts). */
export interface Nodes {
  urls(): readonly string[];
  nameOf(url: string): string;
}

const MEMBERS = Array.from({ length: 8 }, (_, index) => `@m${index}`);
const CURRENCIES = ['USD', 'EUR'];
const THINK_MS_MAX = 15;
const REDIRECTS_MAX = 3;
const BULK_ITEMS_MAX = 20;
/** A read with X-Folio-Seq waits up to 5 s on the node (SEQ_WAIT_MS_MAX): its own timeout is longer. */
const READ_TIMEOUT_MS = 8_000;
const READABLE_KEPT = 64;
const OP_WEIGHTS = { transfer: 34, bulk: 8, hold: 16, act: 16, probe: 3, refund: 8, read: 15 } as const;


function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether an attempt's answer leaves the write possibly applied. */
function indeterminate(attempt: Attempt): boolean {
  return attempt.status === 0 || attempt.status >= 500;
}

class Client {
  private readonly random: Seeded;
  private target: string | undefined;
  private sent = 0;
  /** Holds acknowledged and not yet acted on; holds whose commit was acknowledged; transfers to refund. */
  private readonly holds: string[] = [];
  private readonly committed: string[] = [];
  private readonly refundable: string[] = [];
  private readonly readable: Array<{ transaction_id: string; seq: number }> = [];

  constructor(private readonly index: number, private readonly workload: Workload) {
    this.random = Seeded.derive(workload.options.seed, index);
  }

  async run(): Promise<void> {
    while (!this.workload.stopping) {
      await this.step();
      await sleep(this.random.between(0, THINK_MS_MAX));
    }
  }

  private reference(): string {
    this.sent += 1;
    return `nem-${this.workload.options.seed}-${this.index}-${this.sent}`;
  }

  private transferBody(reference: string, overdraft: boolean): Record<string, unknown> {
    const source = this.random.chance(0.35) ? '@world' : this.random.pick(MEMBERS);
    const destination = this.random.pick(MEMBERS.filter((member) => member !== source));
    return {
      description: 'nemesis', source, destination, currency: this.random.pick(CURRENCIES),
      precise_amount: BigInt(this.random.between(1, 100_000)), reference, allow_overdraft: overdraft, skip_queue: true,
    };
  }

  private async step(): Promise<void> {
    const kind = this.random.weighted(OP_WEIGHTS);
    switch (kind) {
      case 'transfer': {
        const reference = this.reference();
        const op = await this.write('transfer', [reference], 'POST', '/transactions', this.transferBody(reference, !this.random.chance(0.15)));
        if (op.outcome === 'ok' && op.ack?.transaction_id) {
          this.refundable.push(op.ack.transaction_id);
          this.remember(op.ack.transaction_id, op.ack.seq);
        }
        return;
      }
      case 'bulk': {
        const count = this.random.between(2, BULK_ITEMS_MAX);
        const references = Array.from({ length: count }, () => this.reference());
        // One batch in twenty names a reference twice: refused whole (409), nothing of it written.
        if (this.random.chance(0.05)) references[count - 1] = references[0] as string;
        const transactions = references.map((reference) => this.transferBody(reference, true));
        await this.write('bulk', [...new Set(references)], 'POST', '/transactions/bulk', { atomic: true, skip_queue: true, transactions });
        return;
      }
      case 'hold': {
        const reference = this.reference();
        const op = await this.write('hold', [reference], 'POST', '/transactions', { ...this.transferBody(reference, true), inflight: true });
        if (op.outcome === 'ok' && op.ack?.transaction_id) this.holds.push(op.ack.transaction_id);
        return;
      }
      case 'act': {
        const hold = this.holds.shift();
        if (!hold) return;
        const action = this.random.chance(0.6) ? 'commit' : 'void';
        const op = await this.write(action, [], 'PUT', `/transactions/inflight/${hold}`, { status: action, skip_queue: true }, hold);
        if (op.outcome === 'ok' && action === 'commit') this.committed.push(hold);
        return;
      }
      case 'probe': {
        const hold = this.committed.shift();
        if (!hold) return;
        await this.write('void', [], 'PUT', `/transactions/inflight/${hold}`, { status: 'void', skip_queue: true }, hold, true);
        return;
      }
      case 'refund': {
        if (this.refundable.length === 0) return;
        const original = this.refundable.splice(this.random.between(0, this.refundable.length - 1), 1)[0] as string;
        await this.write('refund', [], 'POST', `/refund-transaction/${original}`, { skip_queue: true, allow_overdraft: !this.random.chance(0.2) }, original);
        return;
      }
      case 'read': {
        if (this.readable.length === 0) return;
        await this.read(this.random.pick(this.readable));
        return;
      }
    }
  }

  private remember(transactionId: string, seq: number): void {
    this.readable.push({ transaction_id: transactionId, seq });
    if (this.readable.length > READABLE_KEPT) this.readable.shift();
  }

  /** Sends one write until a definite answer or the end of the client's patience, recording each attempt. */
  private async write(kind: WriteKind, references: string[], method: string, route: string, body: unknown, parent?: string, expectRefusal = false): Promise<WriteOp> {
    const op: WriteOp = { id: this.workload.history.writes.length, client: this.index, kind, references, attempts: [], outcome: 'unknown' };
    if (parent !== undefined) op.parent = parent;
    if (expectRefusal) op.expect_refusal = true;
    this.workload.history.writes.push(op);
    const { request_timeout_ms: timeoutMs, patience_ms: patienceMs } = this.workload.options;
    const deadline = performance.now() + patienceMs;
    let redirects = 0;
    while (performance.now() < deadline) {
      const url = this.target ?? this.random.pick(this.workload.nodes.urls());
      const attempt: Attempt = { node: this.workload.nodes.nameOf(url), sent_at: performance.now(), answered_at: 0, status: 0 };
      let answer: Answer;
      try {
        answer = await call(url, method, route, body, {}, timeoutMs);
      } catch (error) {
        attempt.answered_at = performance.now();
        attempt.code = (error as Error).name === 'TimeoutError' ? 'timeout' : 'no answer';
        op.attempts.push(attempt);
        this.target = this.otherNode(url);
        await sleep(this.random.between(20, 200));
        continue;
      }
      attempt.answered_at = performance.now();
      attempt.status = answer.status;
      const code = answer.body?.error_detail?.code;
      if (typeof code === 'string') attempt.code = code;
      op.attempts.push(attempt);
      if (answer.status === 307 && redirects < REDIRECTS_MAX) {
        redirects += 1;
        this.target = new URL(answer.headers.get('location') ?? url).origin;
        continue;
      }
      redirects = 0;
      if (answer.status >= 200 && answer.status < 300) {
        op.outcome = 'ok';
        op.ack = { node: attempt.node, status: answer.status, seq: Number(answer.headers.get('x-folio-seq')), attempt: op.attempts.length - 1 };
        if (typeof answer.body?.transaction_id === 'string') op.ack.transaction_id = answer.body.transaction_id;
        if (typeof answer.body?.batch_id === 'string') op.ack.batch_id = answer.body.batch_id;
        this.target = url;
        return op;
      }
      if (answer.status >= 400 && answer.status < 500 && answer.status !== 307) {
        const maybeApplied = op.attempts.slice(0, -1).some(indeterminate);
        op.outcome = maybeApplied ? 'unknown' : 'refused';
        if (!maybeApplied) op.refusal = { status: answer.status, code: attempt.code ?? '' };
        this.target = url;
        return op;
      }
      // 503 (no leader, not committed, rejoining, backpressure), another 5xx, or a redirect loop: elsewhere, later.
      this.target = answer.status === 307 ? undefined : this.otherNode(url);
      await sleep(this.random.between(50, 300));
    }
    return op;
  }

  /** Reads an acknowledged write on any node, with its seq: the node must see it (or say it cannot yet). */
  private async read(written: { transaction_id: string; seq: number }): Promise<void> {
    const url = this.random.pick(this.workload.nodes.urls());
    const read: ReadOp = { client: this.index, node: this.workload.nodes.nameOf(url), transaction_id: written.transaction_id, seq: written.seq, status: 0 };
    try {
      const answer = await call(url, 'GET', `/transactions/${written.transaction_id}`, undefined, { 'X-Folio-Seq': String(written.seq) }, READ_TIMEOUT_MS);
      read.status = answer.status;
      const code = answer.body?.error_detail?.code;
      if (typeof code === 'string') read.code = code;
      else if (answer.status === 200 && answer.body?.transaction_id !== written.transaction_id) read.code = `answered ${String(answer.body?.transaction_id)}`;
    } catch (error) {
      read.code = (error as Error).name === 'TimeoutError' ? 'timeout' : 'no answer';
    }
    this.workload.history.reads.push(read);
  }

  private otherNode(url: string): string | undefined {
    const urls = this.workload.nodes.urls();
    const others = urls.filter((candidate) => candidate !== url);
    return others.length === 0 ? undefined : this.random.pick(others);
  }
}

export class Workload {
  stopping = false;
  private running: Array<Promise<void>> = [];

  constructor(readonly options: WorkloadOptions, readonly nodes: Nodes, readonly history: History) {}

  start(): void {
    this.running = Array.from({ length: this.options.clients }, (_, index) => new Client(index, this).run());
  }

  /** Stops after each client's write under way has its answer (or its patience ran out). */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }
}
