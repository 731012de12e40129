// The checks after a run, over HTTP only (so they work the same on a test server and on the CLI in a
// child process): the server still answers /health; every currency's balances sum to zero, settled and
// inflight; and every acknowledged write is still there, transactions with the same precise amount
// digit for digit and findable by their reference.

import { parseJsonExact } from '../http/schemas/lossless-json.js';
import type { AcknowledgedWrites } from './acknowledged-writes.js';
import type { Sender } from './fuzz-request.js';
import { percentEncode } from './route-requests.js';

/** Balances per page when listing them all (the list routes' maximum). */
const PAGE_LIMIT = 100;
/** Listings of every balance before giving up on two in a row agreeing (timers may still be firing). */
const STABLE_READS_MAX = 10;
/** Look-ups in flight at once while checking acknowledged writes. */
const CHECK_CONCURRENCY = 16;

type Json = Record<string, any>;

async function getJson(sender: Sender, path: string): Promise<{ status: number; body: any }> {
  const answer = await sender.send({ method: 'GET', path, headers: {} });
  if (answer.kind === 'no-answer') return { status: 0, body: undefined };
  let body: unknown;
  try {
    body = answer.text === '' ? undefined : parseJsonExact(answer.text);
  } catch {
    body = answer.text;
  }
  return { status: answer.status, body };
}

export async function isHealthy(sender: Sender): Promise<boolean> {
  return (await getJson(sender, '/health')).status === 200;
}

const amount = (value: unknown): bigint => (typeof value === 'bigint' ? value : BigInt(value as number));

async function listBalances(sender: Sender): Promise<Json[]> {
  const balances: Json[] = [];
  for (let offset = 0; ; offset += PAGE_LIMIT) {
    const page = await getJson(sender, `/balances?limit=${PAGE_LIMIT}&offset=${offset}`);
    if (page.status !== 200 || !Array.isArray(page.body)) throw new Error(`GET /balances answered ${page.status}: ${String(page.body).slice(0, 200)}`);
    balances.push(...(page.body as Json[]));
    if (page.body.length < PAGE_LIMIT) return balances;
  }
}

function versions(balances: Json[]): string {
  return balances.map((balance) => `${balance.balance_id}:${balance.version}`).sort().join(',');
}

/**
 * Per currency, the sums that must be zero, from a listing of every balance that two reads in a row
 * agree on (so no transfer landed between its pages). Returns one line per violation.
 */
export async function zeroSumViolations(sender: Sender): Promise<string[]> {
  let previous = await listBalances(sender);
  for (let read = 1; read < STABLE_READS_MAX; read += 1) {
    const current = await listBalances(sender);
    if (versions(current) === versions(previous)) return sumViolations(current);
    previous = current;
  }
  return [`no two listings of the balances agreed in ${STABLE_READS_MAX} reads`];
}

function sumViolations(balances: Json[]): string[] {
  const sums = new Map<string, { settled: bigint; inflight: bigint }>();
  for (const balance of balances) {
    const sum = sums.get(balance.currency) ?? { settled: 0n, inflight: 0n };
    sum.settled += amount(balance.credit_balance) - amount(balance.debit_balance);
    sum.inflight += amount(balance.inflight_credit_balance) - amount(balance.inflight_debit_balance);
    sums.set(balance.currency, sum);
  }
  const violations: string[] = [];
  for (const [currency, sum] of sums) {
    if (sum.settled !== 0n || sum.inflight !== 0n) violations.push(`${currency}: settled sum ${sum.settled}, inflight sum ${sum.inflight}`);
  }
  return violations;
}

/**
 * The query index catches up with the log within `boundMs` and reports no poison event: SRCH_INDEX_BEHIND
 * answers during a run are fine, an index that stays behind is not. Returns the problem, if any.
 */
export async function indexCatchUpProblem(sender: Sender, boundMs: number): Promise<string | undefined> {
  const deadline = Date.now() + boundMs;
  let status: Json | undefined;
  for (;;) {
    const answer = await getJson(sender, '/search/reindex');
    status = answer.body as Json | undefined;
    if (answer.status !== 200) return `GET /search/reindex answered ${answer.status}`;
    if (status?.index_poison) return `the index reports a poison event: ${JSON.stringify(status.index_poison)}`;
    if (status?.status !== 'running' && status?.index_lag_events === 0) return undefined;
    if (Date.now() > deadline) return `the index did not catch up within ${boundMs} ms: ${JSON.stringify(status)}`;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** One look-up per acknowledged write; returns a line for each write that is missing or changed. */
export async function lostWrites(sender: Sender, writes: AcknowledgedWrites): Promise<string[]> {
  const checks: Array<() => Promise<string | undefined>> = [];
  for (const [id, transaction] of writes.transactions) checks.push(() => checkTransaction(sender, id, transaction.preciseAmount, transaction.reference));
  for (const [reference, precise] of writes.bulkReferences) checks.push(() => checkReference(sender, reference, precise));
  for (const id of writes.ledgers) checks.push(() => checkStatus(sender, `/ledgers/${percentEncode(id)}`, 200, `ledger ${id}`));
  for (const id of writes.balances) checks.push(() => checkStatus(sender, `/balances/${percentEncode(id)}`, 200, `balance ${id}`));
  for (const [id, presence] of writes.identities) {
    if (!writes.uncertain.has(id)) checks.push(() => checkStatus(sender, `/identities/${percentEncode(id)}`, presence === 'present' ? 200 : 404, `identity ${id} (${presence})`));
  }
  for (const [id, presence] of writes.hooks) {
    if (!writes.uncertain.has(id)) checks.push(() => checkStatus(sender, `/hooks/${percentEncode(id)}`, presence === 'present' ? 200 : 404, `hook ${id} (${presence})`));
  }
  const owners = new Set([...writes.apiKeys.values()].map((key) => key.owner));
  for (const owner of owners) checks.push(() => checkApiKeys(sender, owner, writes));
  const problems: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < checks.length) {
      const problem = await checks[next++]!();
      if (problem) problems.push(problem);
    }
  };
  await Promise.all(Array.from({ length: CHECK_CONCURRENCY }, worker));
  return problems;
}

async function checkStatus(sender: Sender, path: string, expected: number, what: string): Promise<string | undefined> {
  const { status } = await getJson(sender, path);
  return status === expected ? undefined : `${what}: GET ${path} answered ${status}, expected ${expected}`;
}

async function checkTransaction(sender: Sender, id: string, precise: string, reference: string): Promise<string | undefined> {
  const byId = await getJson(sender, `/transactions/${percentEncode(id)}`);
  if (byId.status !== 200) return `transaction ${id}: GET answered ${byId.status}`;
  if (String(byId.body?.precise_amount) !== precise) return `transaction ${id}: precise_amount ${byId.body?.precise_amount}, acknowledged ${precise}`;
  if (reference === '') return undefined;
  const byReference = await getJson(sender, `/transactions/reference/${percentEncode(reference)}`);
  if (byReference.status !== 200) return `transaction ${id}: its reference ${JSON.stringify(reference)} answered ${byReference.status}`;
  // A rejected refund leaves its reference (`<id>_refund`) to the next try, by design (engine/decide-refund.ts).
  const takenOver = byId.body?.status === 'REJECTED' && byReference.body?.reference === reference;
  if (byReference.body?.transaction_id !== id && !takenOver) {
    const other = byReference.body as Json | undefined;
    return `transaction ${id} (${byId.body?.status}, parent ${byId.body?.parent_transaction || 'none'}): its reference ${JSON.stringify(reference)} `
      + `finds ${other?.transaction_id} (${other?.status}, parent ${other?.parent_transaction || 'none'})`;
  }
  return undefined;
}

async function checkReference(sender: Sender, reference: string, precise: string | undefined): Promise<string | undefined> {
  const found = await getJson(sender, `/transactions/reference/${percentEncode(reference)}`);
  if (found.status !== 200) return `bulk item ${JSON.stringify(reference)}: answered ${found.status}`;
  if (precise !== undefined && String(found.body?.precise_amount) !== precise) {
    return `bulk item ${JSON.stringify(reference)}: precise_amount ${found.body?.precise_amount}, the request implied ${precise}`;
  }
  return undefined;
}

async function checkApiKeys(sender: Sender, owner: string, writes: AcknowledgedWrites): Promise<string | undefined> {
  const listed = await getJson(sender, `/api-keys?owner=${percentEncode(owner)}`);
  if (listed.status !== 200 || !Array.isArray(listed.body)) return `api keys of ${owner}: answered ${listed.status}`;
  const byId = new Map((listed.body as Json[]).map((key) => [key.api_key_id as string, key]));
  for (const [id, key] of writes.apiKeys) {
    if (key.owner !== owner || writes.uncertain.has(id)) continue;
    const found = byId.get(id);
    if (!found) return `api key ${id} of ${owner} is missing`;
    if (key.revoked && found.is_revoked !== true) return `api key ${id}: revoked, but listed as not revoked`;
  }
  return undefined;
}
