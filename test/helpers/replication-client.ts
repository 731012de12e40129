// What the replication tests check over HTTP (the writer and the exchange are the bench's, in
// bench/replication/group-client.ts, re-exported here): an audit of a node's ledger (every acknowledged
// transfer present with the id it was acknowledged with, no reference recorded twice, every balance
// equal to the transfers listed, every currency summing to zero), and every node's state hash at a seq.

import type { GroupNode, ReplicatedGroup } from '../../bench/replication/replicated-group.js';
import { call, type Acknowledged } from '../../bench/replication/group-client.js';

export { call, GroupWriter, type Acknowledged, type Answer, type Transfer } from '../../bench/replication/group-client.js';

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
