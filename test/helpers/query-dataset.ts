// A varied ledger built through the HTTP API for the query tests, from a seed: ledgers, identities (one
// deleted), balances (some owned by identities, some internal), and transactions of every kind the
// engine records (applied, queued, holds committed in part or voided, refunds, rejected), with metadata
// of mixed types and later metadata updates. The collections are then read back from the engine and
// the log, in first-appearance order, as the reference for the index.

import { mulberry32 } from '../../bench/mulberry32.js';
import type { IdentityRecord, LedgerRecord, BalanceRecord, TransactionRecord } from '../../engine/records.js';
import type { TestServer } from './test-server.js';

export const seededRandom = mulberry32;

export const TIERS = ['gold', 'silver', 'Bronze', 'platinum', 'gold-plus'];
export const WORDS = ['rent', 'Salary', 'coffee', 'invoice', 'refund', 'payout', 'fee', 'transfer', 'naïve', 'grocery', '50%_off'];
export const NAMES = ['Ada', 'ada', 'Grace', 'Linus', 'Zoë', 'Émile', 'bob', 'Bob', 'Ümit'];

export interface Dataset {
  ledgers: LedgerRecord[];
  balances: BalanceRecord[];
  transactions: TransactionRecord[];
  identities: IdentityRecord[];
}

async function ok(server: TestServer, method: string, route: string, body?: unknown): Promise<any> {
  const response = await server.request(method, route, body);
  if (response.status >= 300) throw new Error(`${method} ${route} answered ${response.status}: ${response.text}`);
  return response.body;
}

function randomMeta(next: () => number): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  if (next() < 0.8) meta.tier = TIERS[Math.floor(next() * TIERS.length)];
  if (next() < 0.7) meta.score = Math.floor(next() * 20) - 5;
  if (next() < 0.3) meta.flag = next() < 0.5;
  if (next() < 0.2) meta.nested = { level: Math.floor(next() * 3) };
  return meta;
}

export async function buildDataset(server: TestServer, seed: number, transactionCount = 200): Promise<void> {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;

  const ledgerIds: string[] = ['general_ledger_id'];
  for (let index = 0; index < 3; index += 1) {
    ledgerIds.push((await ok(server, 'POST', '/ledgers', { name: `${pick(NAMES)} ledger ${index}`, meta_data: randomMeta(next) })).ledger_id);
  }
  const identityIds: string[] = [];
  for (let index = 0; index < 12; index += 1) {
    const organization = next() < 0.3;
    const identity = await ok(server, 'POST', '/identities', {
      identity_type: organization ? 'organization' : 'individual',
      organization_name: organization ? `${pick(NAMES)} & Co` : '',
      first_name: organization ? '' : pick(NAMES),
      last_name: organization ? '' : pick(NAMES),
      email_address: next() < 0.7 ? `${pick(NAMES).toLowerCase()}${index}@example.com` : '',
      country: pick(['NG', 'GB', 'US', '']),
      dob: next() < 0.6 ? new Date(Date.UTC(1960 + Math.floor(next() * 40), Math.floor(next() * 12), 1 + Math.floor(next() * 28))).toISOString() : undefined,
      meta_data: randomMeta(next),
    });
    identityIds.push(identity.identity_id);
  }
  // One identity is deleted again; it must vanish from the index too.
  const removed = identityIds.pop() as string;
  await ok(server, 'DELETE', `/identities/${removed}`);

  const balanceIds: string[] = [];
  const byCurrency = new Map<string, string[]>();
  for (let index = 0; index < 16; index += 1) {
    const currency = pick(['USD', 'EUR', 'NGN']);
    const balance = await ok(server, 'POST', '/balances', {
      ledger_id: pick(ledgerIds),
      currency,
      identity_id: next() < 0.5 ? pick(identityIds) : undefined,
      meta_data: randomMeta(next),
    });
    balanceIds.push(balance.balance_id);
    byCurrency.set(currency, [...(byCurrency.get(currency) ?? []), balance.balance_id]);
  }
  const holds: Array<{ id: string; amount: number }> = [];
  const applied: string[] = [];
  for (let index = 0; index < transactionCount; index += 1) {
    const currency = pick(['USD', 'EUR', 'NGN']);
    const internal = (): string => `@${pick(['world', 'fees', 'cash'])}`;
    // Now and then a balance of another currency, so refusals and rejections are in the history too.
    const named = (): string => pick(next() < 0.05 ? balanceIds : (byCurrency.get(currency) ?? balanceIds));
    const source = next() < 0.4 ? internal() : named();
    let destination = next() < 0.4 ? internal() : named();
    if (destination === source) destination = '@other';
    const inflight = next() < 0.15;
    const amount = next() < 0.05 ? '123456789012345678901234567890' : 1 + Math.floor(next() * 5000);
    const body = await server.request('POST', '/transactions', {
      precise_amount: amount,
      currency,
      source,
      destination,
      reference: next() < 0.1 ? `INV-${pick(WORDS)}-${index}` : '',
      description: `${pick(WORDS)} ${pick(WORDS)} ${index}`,
      allow_overdraft: next() < 0.8,
      skip_queue: next() < 0.7,
      inflight,
      meta_data: randomMeta(next),
    });
    if (body.status === 201 && body.body.status === 'INFLIGHT') holds.push({ id: body.body.transaction_id, amount: Number(amount) });
    if (body.status === 201 && body.body.status === 'APPLIED') applied.push(body.body.transaction_id);
  }
  for (const hold of holds) {
    const roll = next();
    if (roll < 0.4) await server.request('PUT', `/transactions/inflight/${hold.id}`, { status: 'commit', skip_queue: true, precise_amount: Math.max(1, Math.floor(hold.amount / 2)) });
    else if (roll < 0.7) await server.request('PUT', `/transactions/inflight/${hold.id}`, { status: 'void', skip_queue: true });
  }
  for (const transactionId of applied.slice(0, 5)) await server.request('POST', `/refund-transaction/${transactionId}`, { skip_queue: true });
  for (let index = 0; index < 10; index += 1) {
    const target = pick([...ledgerIds, ...balanceIds, ...identityIds, ...applied]);
    await ok(server, 'POST', `/${target}/metadata`, { meta_data: randomMeta(next) });
  }
}

/** The collections as the index should hold them, in order of first appearance in the log. */
export function datasetOf(server: TestServer): Dataset {
  const { state } = server.runtime.engine;
  // Every transaction the log names, as it stands now (metadata changes are patches in the log).
  const transactions = new Map<string, TransactionRecord>();
  for (const { event } of server.runtime.log.read(1)) {
    for (const record of event.transactions ?? []) transactions.set(record.transaction_id, state.transaction(record.transaction_id) as TransactionRecord);
  }
  return {
    ledgers: [...state.ledgers.values()],
    balances: [...state.balances.values()],
    transactions: [...transactions.values()],
    identities: [...state.identities.values()],
  };
}
