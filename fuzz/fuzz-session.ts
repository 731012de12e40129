// A fuzz run against one server: cases drawn in order from the seeded sequence, sent by a fixed number of
// concurrent workers, each answer judged by the oracles and learned from (pools, acknowledged writes).
// Counts are kept per status and error code, and failures grouped by what failed where, each group with
// its smallest example and the (seed, case) that replays it.
//
// `interrupt(action)` stops the workers from sending, lets the requests in flight end, runs the action
// (the long run kills the server there and starts it again) and resumes: answers lost to the action are
// counted as interrupted, not as failures.

import { AcknowledgedWrites, learnFromAnswer } from './acknowledged-writes.js';
import { checkAnswer, envelopeCode, isRetryLater, isParserRefused, type AnswerOracle, type Failure } from './answer-oracle.js';
import { CaseSequence, caseRequest, type FuzzCase, type SentCase } from './fuzz-case.js';
import type { FuzzAnswer, Sender } from './fuzz-request.js';
import { IdPools } from './id-pools.js';
import type { FuzzRoute, RouteVia } from './route-table.js';

export interface FailureExample {
  seed: number;
  caseIndex: number;
  request: string;
  answer: string;
  detail: string;
  /** Bytes of the request, to keep the smallest example of a group. */
  size: number;
}

export interface FailureGroup {
  signature: string;
  count: number;
  example: FailureExample;
}

export interface SessionOptions {
  seed: number;
  routes: readonly FuzzRoute[];
  concurrency: number;
  sender: Sender;
  /** How raw odd paths are sent (the cloud run sends them through the proxy); as they are when absent. */
  oddPathVia?: RouteVia;
  /** Checks of every answer beside checkAnswer's (the API reference's, documented-answers.ts). */
  oracles?: readonly AnswerOracle[];
}

/** Describes a request for a report: method, path, headers other than the usual, body (abbreviated). */
export function describeSent(sent: SentCase): string {
  const { request } = sent;
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `${name}: ${value.length > 80 ? `${value.slice(0, 20)}…(${value.length} chars)` : value}`);
  const shown = headers.length > 6 ? [...headers.slice(0, 6), `…(${headers.length} headers)`] : headers;
  const flags = [request.chunked ? 'chunked' : '', request.ownConnection ? 'own connection' : ''].filter(Boolean).join(', ');
  return `${request.method} ${request.path.length > 200 ? `${request.path.slice(0, 200)}…(${request.path.length} chars)` : request.path}`
    + (shown.length > 0 ? `\n  ${shown.join('\n  ')}` : '') + (flags ? `\n  (${flags})` : '')
    + (sent.bodyDescription ? `\n  ${sent.bodyDescription.slice(0, 1_500)}` : '');
}

function describeAnswer(answer: FuzzAnswer): string {
  if (answer.kind === 'no-answer') return `no answer: ${answer.error}`;
  return `${answer.status} ${answer.text.length > 400 ? `${answer.text.slice(0, 400)}…` : answer.text}`;
}

/** What kind of case it was, for grouping failures. */
function caseKindOf(fuzzCase: FuzzCase): string {
  if (fuzzCase.kind === 'raw') return `raw ${fuzzCase.raw.kind}`;
  return fuzzCase.mutations.length + fuzzCase.queryMutations.length === 0 ? 'schema' : 'schema, mutated';
}

function requestSize(sent: SentCase): number {
  const body = sent.request.body;
  return sent.request.path.length + (body === undefined ? 0 : typeof body === 'string' ? body.length : body.length)
    + Object.values(sent.request.headers).reduce((sum, value) => sum + value.length, 0);
}

export class FuzzSession {
  readonly pools = new IdPools();
  readonly writes = new AcknowledgedWrites();
  readonly statuses = new Map<string, number>();
  readonly failures = new Map<string, FailureGroup>();
  sender: Sender;
  casesRun = 0;
  interrupted = 0;
  /** 503 answers with a retry-later code (QUEUE_BACKPRESSURE, SRCH_INDEX_BEHIND, SNAPSHOT_UNAVAILABLE). */
  retryLater = 0;
  parserRefused = 0;
  /** Requests sent a second time after a kept-alive connection was reset before any answer. */
  resent = 0;
  private readonly sequence: CaseSequence;
  private gate: Promise<void> | undefined;
  private outage = false;
  private inFlight = 0;
  private drained: (() => void) | undefined;

  constructor(private readonly options: SessionOptions) {
    this.sequence = new CaseSequence(options.seed, options.routes);
    this.sender = options.sender;
  }

  get failureCount(): number {
    let count = 0;
    for (const group of this.failures.values()) count += group.count;
    return count;
  }

  caseAt(index: number): FuzzCase {
    return this.sequence.caseAt(index);
  }

  /** Runs cases [from, to) with the configured number of workers; `onCase` sees each index as it is drawn. */
  async run(from: number, to: number, onCase?: (index: number) => void): Promise<void> {
    let next = from;
    const worker = async (): Promise<void> => {
      for (;;) {
        while (this.gate) await this.gate;
        if (next >= to) return;
        const index = next++;
        onCase?.(index);
        while (this.gate) await this.gate;
        await this.runCase(index);
      }
    };
    await Promise.all(Array.from({ length: this.options.concurrency }, worker));
  }

  /** Sends case `index` and judges its answer. */
  async runCase(index: number): Promise<FuzzAnswer> {
    const fuzzCase = this.caseAt(index);
    const sent = caseRequest(fuzzCase, this.options.routes, this.pools.context(), this.options.oddPathVia);
    this.inFlight += 1;
    let answer: FuzzAnswer;
    try {
      answer = await this.sender.send(sent.request);
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.drained?.();
    }
    this.casesRun += 1;
    if (answer.resent) this.resent += 1;
    if (answer.kind === 'no-answer' && this.outage) {
      this.interrupted += 1;
      learnFromAnswer(sent, answer, this.pools, this.writes);
      return answer;
    }
    this.count(answer);
    if (isParserRefused(sent, answer)) this.parserRefused += 1;
    const failures = checkAnswer(sent, answer);
    for (const oracle of this.options.oracles ?? []) failures.push(...oracle(sent, answer));
    for (const failure of failures) this.recordFailure(index, caseKindOf(fuzzCase), sent, answer, failure);
    learnFromAnswer(sent, answer, this.pools, this.writes);
    return answer;
  }

  /** Sends a request outside the case sequence (set-up), learning from its answer like any other. */
  async sendLearned(sent: SentCase): Promise<FuzzAnswer> {
    const answer = await this.sender.send(sent.request);
    learnFromAnswer(sent, answer, this.pools, this.writes);
    return answer;
  }

  /**
   * Holds the workers, runs `stop` (the long run kills the server there), waits for the requests in
   * flight to end, runs `resume` and lets the workers go on. Requests that fail between the start of
   * `stop` and the end of `resume` count as interrupted, not as failures.
   */
  async interrupt(stop: () => Promise<void>, resume: () => Promise<void>): Promise<void> {
    let release!: () => void;
    this.gate = new Promise((resolve) => {
      release = resolve;
    });
    this.outage = true;
    try {
      const settled = this.inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => {
        this.drained = resolve;
      });
      await stop();
      await settled;
      this.drained = undefined;
      await resume();
    } finally {
      this.outage = false;
      this.gate = undefined;
      release();
    }
  }

  private count(answer: FuzzAnswer): void {
    let key: string;
    if (answer.kind === 'no-answer') key = answer.timedOut ? 'timeout' : 'no answer';
    else {
      const code = answer.status >= 400 ? envelopeCode(answer.text) : undefined;
      key = code ? `${answer.status} ${code}` : String(answer.status);
      if (isRetryLater(answer)) this.retryLater += 1;
    }
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
  }

  private recordFailure(index: number, caseKind: string, sent: SentCase, answer: FuzzAnswer, failure: Failure): void {
    const status = answer.kind === 'answer' ? `${answer.status}` : answer.timedOut ? 'timeout' : 'no answer';
    // Raw cases fail for reasons of transport, not of the route they happen to aim at: one group per raw kind.
    const where = caseKind.startsWith('raw') ? 'any route' : `${sent.request.method} ${sent.routeKey.slice(sent.routeKey.indexOf(' ') + 1)}`;
    const signature = failure.group ? `${failure.kind} | ${failure.group}` : `${failure.kind} | ${where} | ${status} | ${caseKind}`;
    const example: FailureExample = {
      seed: this.options.seed, caseIndex: index, request: describeSent(sent), answer: describeAnswer(answer), detail: failure.detail, size: requestSize(sent),
    };
    const group = this.failures.get(signature);
    if (!group) {
      this.failures.set(signature, { signature, count: 1, example });
      return;
    }
    group.count += 1;
    if (example.size < group.example.size) group.example = example;
  }

  /** Statuses, most frequent first, as `status code: count` lines. */
  statusLines(): string[] {
    return [...this.statuses].sort((a, b) => b[1] - a[1]).map(([key, count]) => `${key}: ${count}`);
  }

  /** Each failure group with its count and smallest example. */
  failureReport(): string {
    const groups = [...this.failures.values()].sort((a, b) => b.count - a.count);
    return groups.map((group) => [
      `FAILURE ${group.signature} (${group.count}x)`,
      `  replay: seed ${group.example.seed}, case ${group.example.caseIndex}`,
      `  ${group.example.detail}`,
      `  request: ${group.example.request.replace(/\n/g, '\n  ')}`,
      `  answer: ${group.example.answer}`,
    ].join('\n')).join('\n');
  }
}
