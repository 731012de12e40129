// Ids and names the server has handed out, kept so generated requests can name things that exist: the
// pools behind `PoolRef`. Each pool keeps the newest POOL_IDS_MAX entries; a reference into an empty
// pool resolves to a well-formed id that names nothing. Learning from answers is in acknowledged-writes.ts (learnFromAnswer).

import { type PoolName, type PoolRef, type SendContext } from './fuzz-json.js';

/** Entries kept per pool: enough variety, and old holds that are long settled drop out. */
const POOL_IDS_MAX = 256;

const UNKNOWN_IDS: Record<PoolName, string> = {
  ledger: 'ldg_00000000-0000-7000-8000-000000000000',
  balance: 'bln_00000000-0000-7000-8000-000000000000',
  indicator: '@never-used',
  identity: 'idt_00000000-0000-7000-8000-000000000000',
  transaction: 'txn_00000000-0000-7000-8000-000000000000',
  hold: 'txn_00000000-0000-7000-8000-000000000001',
  reference: 'ref-never-used',
  apiKey: 'key_00000000-0000-7000-8000-000000000000',
  hook: 'hook_00000000-0000-7000-8000-000000000000',
  record: 'ldg_00000000-0000-7000-8000-000000000001',
};

export class IdPools {
  private readonly pools = new Map<PoolName, string[]>();
  private readonly next = new Map<PoolName, number>();

  add(pool: PoolName, id: string): void {
    const ids = this.pools.get(pool) ?? [];
    this.pools.set(pool, ids);
    if (ids.length < POOL_IDS_MAX) {
      ids.push(id);
      return;
    }
    const slot = this.next.get(pool) ?? 0;
    ids[slot] = id;
    this.next.set(pool, (slot + 1) % POOL_IDS_MAX);
  }

  resolve(ref: PoolRef): string {
    const ids = this.pools.get(ref.pool);
    if (!ids || ids.length === 0) return UNKNOWN_IDS[ref.pool];
    return ids[ref.pick % ids.length]!;
  }

  size(pool: PoolName): number {
    return this.pools.get(pool)?.length ?? 0;
  }

  /** The context a request is written in: these pools and the current time. */
  context(nowMs = Date.now()): SendContext {
    return { resolve: (ref) => this.resolve(ref), nowMs };
  }
}
