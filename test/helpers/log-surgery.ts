// Direct edits of a stopped server's log, for corruption tests: read a record's bytes, write damaged
// bytes back, or cut records off the end. Goes through LMDB itself, so the environment stays valid and
// only the record contents are wrong, which is what Folio's own checks must catch.

import { open } from 'lmdb';
import path from 'node:path';

async function withLog<T>(dataDir: string, work: (db: ReturnType<typeof openLog>['db']) => Promise<T> | T): Promise<T> {
  const { env, db } = openLog(dataDir);
  try {
    return await work(db);
  } finally {
    await env.close();
  }
}

function openLog(dataDir: string) {
  const env = open({ path: path.join(dataDir, 'wal'), maxDbs: 4, mapSize: 1024 ** 3 });
  const db = env.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
  return { env, db };
}

export function recordKeys(dataDir: string): Promise<number[]> {
  return withLog(dataDir, (db) => [...db.getKeys({})] as number[]);
}

export function readRecord(dataDir: string, key: number): Promise<Buffer> {
  return withLog(dataDir, (db) => {
    const bytes = db.get(key);
    if (!bytes) throw new Error(`no record ${key}`);
    return Buffer.from(bytes);
  });
}

export function writeRecord(dataDir: string, key: number, bytes: Buffer): Promise<void> {
  return withLog(dataDir, async (db) => {
    await db.put(key, bytes);
  });
}

/** Flips one bit of the record's byte at `offset` (negative: from the end). */
export async function flipRecordByte(dataDir: string, key: number, offset: number): Promise<void> {
  const bytes = await readRecord(dataDir, key);
  const at = offset < 0 ? bytes.length + offset : offset;
  bytes[at] = (bytes[at] as number) ^ 0x10;
  await writeRecord(dataDir, key, bytes);
}

export async function truncateRecord(dataDir: string, key: number, length: number): Promise<void> {
  const bytes = await readRecord(dataDir, key);
  await writeRecord(dataDir, key, bytes.subarray(0, length));
}

/** Removes every record with a key at or after `fromKey` (a log cut short). */
export function removeRecordsFrom(dataDir: string, fromKey: number): Promise<number> {
  return withLog(dataDir, async (db) => {
    const keys = [...db.getKeys({ start: fromKey })] as number[];
    for (const key of keys) await db.remove(key);
    return keys.length;
  });
}
