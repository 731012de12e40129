// Thin helpers over Folio's HTTP API for the lifecycle tests: funding, reading balances and
// transactions, waiting for queued work and timers, and the ledger-wide zero-sum check. They work
// against any base URL, so the in-process server and the child-process server share them.

import type { Test } from 'tap';
import { sendRequest, type TestResponse } from './test-server.js';

export class LedgerClient {
  constructor(readonly url: string) {}

  request(method: string, route: string, body?: unknown): Promise<TestResponse> {
    return sendRequest(this.url, method, route, body);
  }

  post(route: string, body?: unknown): Promise<TestResponse> {
    return this.request('POST', route, body);
  }

  put(route: string, body?: unknown): Promise<TestResponse> {
    return this.request('PUT', route, body);
  }

  get(route: string): Promise<TestResponse> {
    return this.request('GET', route);
  }

  /** Moves `amount` from `@world` (allowed to go negative) to `name`; returns the balance id. */
  async fund(name: string, amount: bigint | number, currency = 'USD'): Promise<string> {
    const response = await this.post('/transactions', {
      description: 'test', precise_amount: BigInt(amount), currency, source: '@world', destination: name, allow_overdraft: true, skip_queue: true,
    });
    if (response.status !== 201 || response.body.status !== 'APPLIED') throw new Error(`funding ${name} failed: ${response.text}`);
    return response.body.destination as string;
  }

  async balance(balanceId: string): Promise<any> {
    const response = await this.get(`/balances/${balanceId}`);
    if (response.status !== 200) throw new Error(`balance ${balanceId}: ${response.text}`);
    return response.body;
  }

  async balanceByName(name: string, currency = 'USD'): Promise<any> {
    const response = await this.get(`/balances/indicator/${encodeURIComponent(name)}/currency/${currency}`);
    if (response.status !== 200) throw new Error(`balance ${name}: ${response.text}`);
    return response.body;
  }

  /** Settled, inflight debit, inflight credit and available amounts of a balance, as bigints. */
  async amounts(balanceId: string): Promise<{ balance: bigint; inflight_debit: bigint; inflight_credit: bigint; available: bigint }> {
    const record = await this.balance(balanceId);
    return {
      balance: BigInt(record.balance),
      inflight_debit: BigInt(record.inflight_debit_balance),
      inflight_credit: BigInt(record.inflight_credit_balance),
      available: BigInt(record.available_balance),
    };
  }

  async transaction(transactionId: string): Promise<any> {
    const response = await this.get(`/transactions/${transactionId}`);
    if (response.status !== 200) throw new Error(`transaction ${transactionId}: ${response.text}`);
    return response.body;
  }

  /** Polls a transaction until `done` holds (queue work and timers run in the background). */
  async waitForTransaction(transactionId: string, done: (record: any) => boolean, timeoutMs = 15_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const record = await this.transaction(transactionId);
      if (done(record)) return record;
      if (Date.now() > deadline) throw new Error(`transaction ${transactionId} still ${record.status} after ${timeoutMs} ms`);
      await sleep(25);
    }
  }

  /** Waits until the transaction has left QUEUED (and SCHEDULED, unless asked to stop there). */
  settled(transactionId: string): Promise<any> {
    return this.waitForTransaction(transactionId, (record) => record.status !== 'QUEUED' && record.status !== 'SCHEDULED');
  }

  /** Every balance, all pages. */
  async allBalances(): Promise<any[]> {
    const balances: any[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await this.get(`/balances?limit=100&offset=${offset}`);
      if (page.status !== 200) throw new Error(`balance list: ${page.text}`);
      balances.push(...page.body);
      if (page.body.length < 100) return balances;
    }
  }

  /** The newest transactions (up to `count`), newest first. */
  async recentTransactions(count = 100): Promise<any[]> {
    const page = await this.get(`/transactions?limit=${Math.min(count, 100)}`);
    if (page.status !== 200) throw new Error(`transaction list: ${page.text}`);
    return page.body;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** For every currency, settled balances and inflight balances each sum to zero over all balances. */
export async function checkZeroSumOverHttp(t: Test, client: LedgerClient): Promise<void> {
  const sums = new Map<string, { settled: bigint; inflight: bigint; count: number }>();
  for (const record of await client.allBalances()) {
    const sum = sums.get(record.currency) ?? { settled: 0n, inflight: 0n, count: 0 };
    sum.settled += BigInt(record.balance);
    sum.inflight += BigInt(record.inflight_balance);
    sum.count += 1;
    sums.set(record.currency, sum);
  }
  t.ok(sums.size > 0, 'there are balances to check');
  for (const [currency, sum] of sums) {
    t.equal(sum.settled, 0n, `${currency}: the ${sum.count} balances sum to zero`);
    t.equal(sum.inflight, 0n, `${currency}: inflight amounts sum to zero`);
  }
}

/** Checks an error answer: status, code, and the envelope around them. */
export function checkError(t: Test, response: TestResponse, status: number, code: string, message = code): void {
  t.equal(response.status, status, `${message}: HTTP ${status}`);
  t.equal(response.body?.error_detail?.code, code, `${message}: code ${code}`);
  t.type(response.body?.error, 'string', `${message}: envelope has error text`);
  t.type(response.body?.error_detail?.message, 'string', `${message}: envelope has a message`);
}
