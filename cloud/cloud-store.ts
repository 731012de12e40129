// The control plane's durable store: one LMDB environment of its own in `<cloud data dir>/store`
// (mode 0700), one database of records keyed `<kind>/<id>`. The services keep what they need in memory
// (it is small: users, clients, live tokens, deployments) and write every change through; a change is
// acknowledged only after LMDB has flushed it to disk, so an acknowledged cloud write survives a crash.
// Changes that must land together (a code redeemed and the tokens it issued; a cutover's two
// deployments) are written in one transaction.

import { open, type Database, type RootDatabase } from 'lmdb';
import fs from 'node:fs';
import path from 'node:path';

export type RecordKind = 'config' | 'user' | 'client' | 'code' | 'family' | 'access' | 'refresh' | 'deployment';

/** One change: a record written, or removed (value undefined). */
export interface StoreChange {
  kind: RecordKind;
  id: string;
  value: unknown;
}

const MAP_BYTES = 1024 ** 3;

export class CloudStore {
  private constructor(private readonly env: RootDatabase, private readonly records: Database<unknown, string>) {}

  static open(dataDir: string): CloudStore {
    const dir = path.join(dataDir, 'store');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dataDir, 0o700);
    const env = open({ path: dir, maxDbs: 2, mapSize: MAP_BYTES });
    return new CloudStore(env, env.openDB<unknown, string>({ name: 'records', encoding: 'msgpack' }));
  }

  /** Every record of a kind, in key order. */
  all<T>(kind: RecordKind): T[] {
    const values: T[] = [];
    for (const { value } of this.records.getRange({ start: `${kind}/`, end: `${kind}/\uffff` })) values.push(value as T);
    return values;
  }

  get<T>(kind: RecordKind, id: string): T | undefined {
    return this.records.get(`${kind}/${id}`) as T | undefined;
  }

  put(kind: RecordKind, id: string, value: unknown): Promise<void> {
    return this.commit([{ kind, id, value }]);
  }

  /** Writes the changes in one transaction and resolves once they are on disk. */
  async commit(changes: StoreChange[]): Promise<void> {
    await this.env.transaction(() => {
      for (const change of changes) {
        const key = `${change.kind}/${change.id}`;
        if (change.value === undefined) void this.records.remove(key);
        else void this.records.put(key, change.value);
      }
    });
    await this.env.flushed;
  }

  async close(): Promise<void> {
    await this.env.close();
  }
}
