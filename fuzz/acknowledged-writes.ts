// Every write the server acknowledged during a run, so that after a restart (clean or after SIGKILL)
// each can be looked for: a 2xx for a write means its log record was on disk, so losing it is a bug.
// Transactions keep the precise amount they were acknowledged with, to compare digit for digit.
// Deletions and revocations are remembered too (a deleted identity must stay deleted); an id whose
// delete got no answer (the server was killed meanwhile), or was refused when sent again after a
// connection reset, is uncertain and not checked.
//
// `learnFromAnswer` reads each successful answer once: it records the write here and feeds the id pools
// that later requests draw from.

import { parseJsonExact } from '../http/schemas/lossless-json.js';
import type { SentCase } from './fuzz-case.js';
import type { FuzzAnswer } from './fuzz-request.js';
import { entryOf, RepeatedArray, type FuzzJson } from './fuzz-json.js';
import { impliedPreciseAmount } from './exact-amounts.js';
import type { IdPools } from './id-pools.js';

export interface AcknowledgedTransaction {
  reference: string;
  /** Digits of precise_amount as acknowledged. */
  preciseAmount: string;
}

export interface AcknowledgedApiKey {
  owner: string;
  revoked: boolean;
}

type Presence = 'present' | 'deleted';

export class AcknowledgedWrites {
  readonly transactions = new Map<string, AcknowledgedTransaction>();
  /** References of bulk items (their ids are not in the answer), with the amount they imply when known. */
  readonly bulkReferences = new Map<string, string | undefined>();
  readonly ledgers = new Set<string>();
  readonly balances = new Set<string>();
  readonly identities = new Map<string, Presence>();
  readonly hooks = new Map<string, Presence>();
  readonly apiKeys = new Map<string, AcknowledgedApiKey>();
  /** Ids whose deletion was sent but not answered: either state is right. */
  readonly uncertain = new Set<string>();

  get size(): number {
    return this.transactions.size + this.bulkReferences.size + this.ledgers.size + this.balances.size
      + this.identities.size + this.hooks.size + this.apiKeys.size;
  }

  /** Deleted stays deleted: answers arrive in any order, a later-read success cannot undo an earlier delete. */
  markDeleted(map: Map<string, Presence>, id: string): void {
    map.set(id, 'deleted');
  }

  markPresent(map: Map<string, Presence>, id: string): void {
    if (map.get(id) !== 'deleted') map.set(id, 'present');
  }
}

type Json = Record<string, unknown>;

function parsed(text: string): Json | undefined {
  try {
    const value = parseJsonExact(text);
    return typeof value === 'object' && value !== null ? value as Json : undefined;
  } catch {
    return undefined;
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Records what a successful answer acknowledged, and feeds the pools. */
export function learnFromAnswer(sent: SentCase, answer: FuzzAnswer, pools: IdPools, writes: AcknowledgedWrites): void {
  const key = effectiveRoute(sent);
  const succeeded = answer.kind === 'answer' && answer.status >= 200 && answer.status < 300;
  // A delete without an answer, or refused when sent again after a reset, may have been carried out.
  if (key.startsWith('DELETE ') && !succeeded && (answer.kind === 'no-answer' || answer.resent)) writes.uncertain.add(sent.params[0] ?? '');
  if (answer.kind === 'no-answer' || !succeeded) return;
  const body = answer.status === 204 ? undefined : parsed(answer.text);
  if (body && body.dry_run === true) return;
  LEARNERS[key]?.({ sent, body, answerText: answer.text, pools, writes });
}

/** The route the request really reached: a raw case may send another method to a route's path. */
function effectiveRoute(sent: SentCase): string {
  const space = sent.routeKey.indexOf(' ');
  return `${sent.request.method} ${sent.routeKey.slice(space + 1)}`;
}

interface Learned {
  sent: SentCase;
  body: Json | undefined;
  answerText: string;
  pools: IdPools;
  writes: AcknowledgedWrites;
}

const LEARNERS: Record<string, (learned: Learned) => void> = {
  'POST /ledgers': ({ body, pools, writes }) => {
    const id = text(body?.ledger_id);
    if (!id) return;
    writes.ledgers.add(id);
    pools.add('ledger', id);
    pools.add('record', id);
  },
  'POST /balances': ({ body, pools, writes }) => {
    const id = text(body?.balance_id);
    if (!id) return;
    writes.balances.add(id);
    pools.add('balance', id);
    pools.add('record', id);
    const indicator = text(body?.indicator);
    if (indicator) pools.add('indicator', indicator);
  },
  'POST /transactions': ({ body, pools, writes }) => learnTransaction(body, pools, writes),
  'POST /refund-transaction/:id': ({ body, pools, writes }) => learnTransaction(body, pools, writes),
  'PUT /transactions/inflight/:id': ({ body, pools, writes }) => {
    if (body?.queued === true) return;
    learnTransaction(body, pools, writes);
  },
  'POST /transactions/inflight/bulk/commit': ({ body, pools, writes }) => learnResults(body, pools, writes),
  'POST /transactions/inflight/bulk/void': ({ body, pools, writes }) => learnResults(body, pools, writes),
  'POST /transactions/bulk': ({ sent, body, writes, pools }) => learnBulk(sent, body, pools, writes),
  'POST /identities': ({ body, pools, writes }) => {
    const id = text(body?.identity_id);
    if (!id) return;
    // A caller may create an identity again under the id of a deleted one; answers arrive in any order,
    // so which of the two came last is not known here: either state is right.
    if (writes.identities.get(id) === 'deleted') writes.uncertain.add(id);
    writes.markPresent(writes.identities, id);
    pools.add('identity', id);
    pools.add('record', id);
  },
  'DELETE /identities/:id': ({ sent, writes }) => writes.markDeleted(writes.identities, sent.params[0]!),
  'POST /hooks': ({ body, pools, writes }) => {
    const id = text(body?.hook_id);
    if (!id) return;
    writes.markPresent(writes.hooks, id);
    pools.add('hook', id);
  },
  'DELETE /hooks/:id': ({ sent, writes }) => writes.markDeleted(writes.hooks, sent.params[0]!),
  // Rules and runs feed the shared pool of record ids the reconciliation routes draw from.
  'POST /reconciliation/matching-rules': ({ body, pools }) => {
    const id = text(body?.rule_id);
    if (id) pools.add('record', id);
  },
  'POST /reconciliation/start': ({ body, pools }) => {
    const id = text(body?.reconciliation_id);
    if (id) pools.add('record', id);
  },
  'POST /reconciliation/start-instant': ({ body, pools }) => {
    const id = text(body?.reconciliation_id);
    if (id) pools.add('record', id);
  },
  'POST /api-keys': ({ body, pools, writes }) => {
    const id = text(body?.api_key_id);
    const owner = text(body?.owner_id);
    if (!id || owner === undefined) return;
    if (!writes.apiKeys.has(id)) writes.apiKeys.set(id, { owner, revoked: false });
    pools.add('apiKey', id);
  },
  'DELETE /api-keys/:id': ({ sent, writes }) => {
    const key = writes.apiKeys.get(sent.params[0]!);
    if (key) key.revoked = true;
  },
};

function learnTransaction(body: Json | undefined, pools: IdPools, writes: AcknowledgedWrites): void {
  const id = text(body?.transaction_id);
  const precise = body?.precise_amount;
  if (!id || (typeof precise !== 'bigint' && typeof precise !== 'number')) return;
  const reference = text(body?.reference) ?? '';
  writes.transactions.set(id, { reference, preciseAmount: String(precise) });
  pools.add('transaction', id);
  pools.add('record', id);
  if (reference) pools.add('reference', reference);
  if (body?.inflight === true && (body.status === 'INFLIGHT' || body.status === 'QUEUED')) pools.add('hold', id);
  for (const side of [body?.source, body?.destination]) if (typeof side === 'string' && side.startsWith('@')) pools.add('indicator', side);
}

function learnResults(body: Json | undefined, pools: IdPools, writes: AcknowledgedWrites): void {
  const results = body?.results;
  if (!Array.isArray(results)) return;
  for (const result of results as Json[]) {
    if (result?.status === 'success') learnTransaction(result.transaction as Json | undefined, pools, writes);
  }
}

/** The first `transaction_count` items of a bulk were recorded; their references are how to find them. */
function learnBulk(sent: SentCase, body: Json | undefined, pools: IdPools, writes: AcknowledgedWrites): void {
  const count = typeof body?.transaction_count === 'number' ? body.transaction_count : 0;
  const sentBody = typeof sent.request.body === 'string' ? parsed(sent.request.body) : undefined;
  const items = sentBody?.transactions;
  if (!Array.isArray(items)) return;
  const trees = itemTrees(sent.body);
  for (let index = 0; index < Math.min(count, items.length); index += 1) {
    const reference = text((items[index] as Json | undefined)?.reference);
    if (!reference) continue;
    const implied = trees === undefined ? undefined : impliedPreciseAmount(trees(index));
    writes.bulkReferences.set(reference, implied?.toString());
    pools.add('reference', reference);
  }
}

/** Item `index` of the tree's `transactions`, when the body was sent as a tree. */
function itemTrees(body: FuzzJson | undefined): ((index: number) => FuzzJson | undefined) | undefined {
  const list = entryOf(body, 'transactions');
  if (Array.isArray(list)) return (index) => list[index];
  if (list instanceof RepeatedArray) return () => list.item;
  return undefined;
}
