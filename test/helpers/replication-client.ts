// Clients of a replicated group for the replication tests: a writer that finds the leader on its own
// (following 307s, waiting out 503s and dead connections, resending with the same reference until it
// gets a definite answer), and an audit of a node's ledger over HTTP: every acknowledged transfer present
// with the id it was acknowledged with, no reference recorded twice, every balance equal to the
// transfers listed, every currency summing to zero; and every node's state hash at one seq.

import type { GroupNode, ReplicatedGroup } from '../../bench/replication/replicated-group.js';
import { jsonWithBigInts } from './test-server.js';
import { parseJsonExact } from '../../http/lossless-json.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** One HTTP exchange, redirects not followed; bigints exact both ways. */
export async function call(url: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url + route, {
    method,
    redirect: 'manual',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : jsonWithBigInts(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : parseJsonExact(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

export interface Transfer {
  source: string;
  destination: string;
  currency: string;
  precise_amount: bigint;
  reference: string;
  allow_overdraft: true;
  skip_queue: true;
}

export interface Acknowledged {
  transfer: Transfer;
  transaction_id: string;
  seq: number;
  status: number;
}

/** Sends writes to whichever node leads, until each has a definite answer. */
export class GroupWriter {
  private target: string | undefined;
  readonly acknowledged: Acknowledged[] = [];
  /** Answers other than 2xx that were final (4xx), and how many attempts were resent. */
  readonly refused: Array<{ transfer: Transfer; status: number; body: unknown }> = [];
  resends = 0;
  /** Every 2xx answer to a write, by status (a 200 is a resend answered with the transaction it made). */
  readonly statuses = new Map<number, number>();

  constructor(private readonly group: ReplicatedGroup, private readonly patienceMs = 60_000) {}

  async transfer(transfer: Transfer): Promise<Acknowledged | undefined> {
    const deadline = performance.now() + this.patienceMs;
    for (let attempt = 0; ; attempt += 1) {
      if (performance.now() > deadline) throw new Error(`no definite answer for ${transfer.reference} within ${this.patienceMs} ms\n${this.group.describe()}`);
      if (attempt > 0) this.resends += 1;
      const url = this.target ?? (await this.findTarget());
      let answer: Answer;
      try {
        answer = await call(url, 'POST', '/transactions', transfer);
      } catch {
        this.target = undefined; // the node is gone: find the leader again
        await pause();
        continue;
      }
      this.statuses.set(answer.status, (this.statuses.get(answer.status) ?? 0) + 1);
      if (answer.status === 307) {
        this.target = new URL(answer.headers.get('location') ?? '').origin;
        continue;
      }
      if (answer.status === 503) {
        this.target = undefined;
        await pause();
        continue;
      }
      if (answer.status === 200 || answer.status === 201) {
        const acknowledged = { transfer, transaction_id: answer.body.transaction_id as string, seq: Number(answer.headers.get('x-folio-seq')), status: answer.status };
        this.acknowledged.push(acknowledged);
        return acknowledged;
      }
      if (answer.status >= 500) throw new Error(`${transfer.reference} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      this.refused.push({ transfer, status: answer.status, body: answer.body });
      return undefined;
    }
  }

  /** Any running node (the writer follows its redirect), preferring one that says it leads. */
  private async findTarget(): Promise<string> {
    const running = this.group.nodes.filter((node) => this.group.isRunning(node) && node.url);
    for (const node of running) {
      const health = await this.group.health(node);
      if (health?.role === 'leader') return (this.target = node.url as string);
      if (health?.leader) return (this.target = health.leader.url);
    }
    const any = running[0]?.url;
    if (!any) throw new Error('no node is running');
    return any;
  }
}

function pause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50));
}

async function listAll(url: string, route: string): Promise<any[]> {
  const all: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await call(url, 'GET', `${route}?limit=100&offset=${offset}`);
    if (page.status !== 200) throw new Error(`GET ${route} answered ${page.status}: ${JSON.stringify(page.body)}`);
    all.push(...(page.body as any[]));
    if ((page.body as any[]).length < 100) return all;
  }
}

/** What is wrong with the ledger `url` serves, given what was acknowledged (empty: nothing). */
export async function auditLedger(url: string, acknowledged: readonly Acknowledged[]): Promise<string[]> {
  const problems: string[] = [];
  const transactions = await listAll(url, '/transactions');
  const balances = await listAll(url, '/balances');
  const byReference = new Map<string, any>();
  for (const transaction of transactions) {
    if (transaction.reference && byReference.has(transaction.reference)) problems.push(`reference ${transaction.reference} recorded twice`);
    byReference.set(transaction.reference, transaction);
  }
  const indicator = new Map<string, string>(balances.map((balance) => [balance.balance_id as string, balance.indicator as string]));
  for (const { transfer, transaction_id } of acknowledged) {
    const stored = byReference.get(transfer.reference);
    if (!stored) problems.push(`acknowledged ${transfer.reference} (${transaction_id}) is missing`);
    else if (stored.transaction_id !== transaction_id) problems.push(`${transfer.reference} acknowledged as ${transaction_id}, recorded as ${stored.transaction_id}`);
    else if (BigInt(stored.precise_amount) !== transfer.precise_amount || indicator.get(stored.source) !== transfer.source || indicator.get(stored.destination) !== transfer.destination) {
      problems.push(`${transfer.reference} recorded as something else than was sent`);
    }
  }
  const flows = new Map<string, { credit: bigint; debit: bigint }>();
  const flow = (id: string) => flows.get(id) ?? flows.set(id, { credit: 0n, debit: 0n }).get(id)!;
  for (const transaction of transactions) {
    if (transaction.status !== 'APPLIED') continue;
    flow(transaction.source).debit += BigInt(transaction.precise_amount);
    flow(transaction.destination).credit += BigInt(transaction.precise_amount);
  }
  const sums = new Map<string, bigint>();
  for (const balance of balances) {
    sums.set(balance.currency, (sums.get(balance.currency) ?? 0n) + BigInt(balance.balance));
    const expected = flows.get(balance.balance_id) ?? { credit: 0n, debit: 0n };
    if (BigInt(balance.credit_balance) !== expected.credit || BigInt(balance.debit_balance) !== expected.debit) {
      problems.push(`${balance.indicator} ${balance.currency} is ${balance.credit_balance}/${balance.debit_balance}, its transfers say ${expected.credit}/${expected.debit}`);
    }
  }
  for (const [currency, sum] of sums) if (sum !== 0n) problems.push(`${currency} sums to ${sum}`);
  return problems;
}

/** Each running node's state hash at `seq` (each waits, bounded, to reach it). */
export async function stateHashes(group: ReplicatedGroup, seq: number): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  for (const node of group.nodes.filter((candidate: GroupNode) => group.isRunning(candidate))) {
    const answer = await call(node.url as string, 'GET', `/admin/replication?at_seq=${seq}&state_hash=true&wait_ms=30000`);
    hashes.set(node.name, answer.status === 200 ? answer.body.state_hash : `${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return hashes;
}

/** The leader's applied seq once it has stopped moving (no write for a while), bounded. */
export async function quietSeq(group: ReplicatedGroup, leader: GroupNode): Promise<number> {
  let last = -1;
  return group.waitFor('a quiet leader', 30_000, async () => {
    const seq = (await group.health(leader))?.applied_seq;
    if (seq !== undefined && seq === last) return seq;
    last = seq ?? -1;
    await new Promise((resolve) => setTimeout(resolve, 300));
    return undefined;
  });
}
