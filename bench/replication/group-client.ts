// Clients of a replicated group, for the replication tests and the bench: one HTTP exchange with exact
// bigints and no redirect followed, and a writer that finds the leader on its own (following 307s,
// waiting out 503s and dead connections, resending with the same reference until it gets a definite
// answer), keeping every acknowledged write with which node answered it and when.

import { parseJsonExact } from '../../http/schemas/lossless-json.js';
import type { ReplicatedGroup } from './replicated-group.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** One HTTP exchange, redirects not followed; bigints exact both ways. */
export async function call(url: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<Answer> {
  const response = await fetch(url + route, {
    method,
    redirect: 'manual',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : jsonWithBigInts(body),
    signal: AbortSignal.timeout(timeoutMs),
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
  description: string;
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
  /** The node that answered, and when the answer came (performance.now()). */
  node_url: string;
  at_ms: number;
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
  /** Every 503 answer to a write, by its error code (what a node says while it cannot take the write). */
  readonly unavailable = new Map<string, number>();

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
        const code = String(answer.body?.error_detail?.code);
        this.unavailable.set(code, (this.unavailable.get(code) ?? 0) + 1);
        this.target = undefined;
        await pause();
        continue;
      }
      if (answer.status === 200 || answer.status === 201) {
        const acknowledged: Acknowledged = {
          transfer, transaction_id: answer.body.transaction_id as string, seq: Number(answer.headers.get('x-folio-seq')), status: answer.status,
          node_url: url, at_ms: performance.now(),
        };
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

/** JSON text in which bigints are written as bare digits. */
export function jsonWithBigInts(value: unknown): string {
  const marker = '__bigint__';
  return JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? `${marker}${item}${marker}` : item))
    .replace(new RegExp(`"${marker}(-?\\d+)${marker}"`, 'g'), '$1');
}
