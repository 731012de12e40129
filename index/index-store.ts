// The index file (data/index.sqlite) and its connections: one writer, used only by the projector, and a
// small pool of readers for queries. In WAL mode readers never wait for the writer and see each commit
// as a whole, checkpoint included. A file with another schema version (or not an index at all) is
// deleted and recreated: everything in it can be rebuilt from the log.

import fs from 'node:fs';
import path from 'node:path';
import { buildFullTextInChild, fullTextFileFor } from './full-text-build.js';
import { COLLECTIONS, deferredIndexesSql, ftsTable, fullTextFromCopySql, LAYOUTS, schemaSql, SCHEMA_VERSION, secondCountsTable, TEXT_CHECKPOINT_KEY, TEXT_MARKS_TABLE, TEXT_TARGETS, textRowKey, vocabularySql } from './index-schema.js';
import { isInterrupted, MMAP_BYTES_MAX, SqliteConnection } from './sqlite-connection.js';
import { RECONCILIATION_TABLES, TRANSACTION_TEXTS_FTS } from './reconciliation-tables.js';
import { SPILL_SUFFIX } from './record-spill.js';

export const INDEX_FILE_NAME = 'index.sqlite';
/** Reader connections: queries beyond this many wait for a free one. */
export const READERS_DEFAULT = 2;
/** A query running longer than this is interrupted and answered with an error. */
export const QUERY_TIMEOUT_MS_DEFAULT = 10_000;

/**
 * The writer's page cache is SQLite's own memory (malloc'd pages, resident for as long as the connection
 * lives); pages past it come from the kernel's page cache, which is not the process's. 128 MiB of it
 * was 108 MiB more resident memory than 32 MiB with 300,000 balances indexed (the memory bench), for
 * catching up 10-15 % faster in the same runs; 64 MiB sits between them.
 */
const WRITER_CACHE_KIB = 65_536;

const WRITER_PRAGMAS = `
  PRAGMA journal_mode = WAL;
  PRAGMA synchronous = NORMAL;
  PRAGMA cache_size = -${WRITER_CACHE_KIB};
  PRAGMA temp_store = MEMORY;
  PRAGMA wal_autocheckpoint = 4000;
`;
/**
 * How a rebuilt file is finished (closeForMove). Its biggest table is read once per secondary index:
 * through a map instead of the page cache that took about a third less time (no copy of every page per
 * read). The mapped pages count in the process's resident memory until the connection closes, so the
 * map is set up only for the finish (filling the tables measured the same with it or without).
 * SQLite sorts an index's entries in memory in one piece when temporary data is kept in memory; with
 * temporary files allowed and a small cache it sorts runs of a few megabytes and merges them, which fit
 * the processor's caches: sorting a million transactions by source went from 2.3 s to 1.6 s, all seven
 * transaction indexes from 7.1 s to 5.4 s. (Sorting with a helper thread was faster on its own, but
 * slower beside the child process building the full-text indexes.)
 */
const FINISH_PRAGMAS = `
  PRAGMA mmap_size = ${MMAP_BYTES_MAX};
  PRAGMA temp_store = FILE;
  PRAGMA cache_size = -4096;
`;
/**
 * A file being built off to the side is thrown away if anything goes wrong before it is finished, so
 * it needs neither the WAL (which writes every page twice: into the -wal file, then into the database
 * at each checkpoint) nor syncs. The rollback journal stays, in memory, so a failed batch can still be
 * rolled back; appended pages have no old content to journal. The finished file is synced once before
 * it may be renamed over the live index (closeForMove).
 */
const BUILD_PRAGMAS = `
  PRAGMA journal_mode = MEMORY;
  PRAGMA synchronous = OFF;
  PRAGMA cache_size = -131072;
  PRAGMA temp_store = MEMORY;
`;
/**
 * Readers map the whole file (up to SQLite's cap): a page past the map is a read call each time it is
 * needed, and at a million transactions the file is 900 MB, so a page of rows picked by id cost 0.27 ms
 * past a 256 MiB map against 0.18 ms mapped, as at a tenth of the size. The mapped pages are the page
 * cache's, shared by every reader and given back when the kernel needs them.
 */
const READER_PRAGMAS = `
  PRAGMA cache_size = -32768;
  PRAGMA temp_store = MEMORY;
  PRAGMA mmap_size = ${MMAP_BYTES_MAX};
`;

export class QueryTimeoutError extends Error {
  override readonly name = 'QueryTimeoutError';
}

export interface IndexCheckpoint {
  seq: number;
  /** Decided time of the event at `seq`: tells this log's history apart from another one's. */
  at: number;
  /** The seq every row of which is in the full-text indexes (index-schema.ts TEXT_TARGETS). */
  text_seq: number;
}

export function indexFileIn(dataDir: string): string {
  return path.join(dataDir, INDEX_FILE_NAME);
}

export function removeIndexFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal', SPILL_SUFFIX]) fs.rmSync(file + suffix, { force: true });
  fs.rmSync(fullTextFileFor(file), { force: true });
}

export class IndexStore {
  private readonly idle: SqliteConnection[];
  private readonly waiting: Array<(reader: SqliteConnection) => void> = [];
  private active = 0;
  private drained: (() => void) | undefined;

  private constructor(
    readonly file: string,
    private readonly writerConnection: SqliteConnection | undefined,
    private readonly readers: SqliteConnection[],
    private readonly queryTimeoutMs: number,
  ) {
    this.idle = [...readers];
  }

  get writer(): SqliteConnection {
    if (!this.writerConnection) throw new Error('this index store has no writer');
    return this.writerConnection;
  }

  /** A store with only the writer: what the projector needs (it may run in its own thread). */
  static async openWriter(file: string): Promise<IndexStore> {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return new IndexStore(file, await openWriter(file), [], QUERY_TIMEOUT_MS_DEFAULT);
  }

  /** Readers only, over a file whose schema the writer has already made. */
  static async openReaders(file: string, options: { readers?: number; queryTimeoutMs?: number } = {}): Promise<IndexStore> {
    const readers: SqliteConnection[] = [];
    for (let index = 0; index < (options.readers ?? READERS_DEFAULT); index += 1) {
      const reader = await SqliteConnection.open(file);
      await reader.exec(READER_PRAGMAS);
      // After temp_store (setting it drops temporary tables), before query_only (creating them writes
      // the connection's temporary schema).
      await reader.exec(`${vocabularySql()} PRAGMA query_only = 1;`);
      readers.push(reader);
    }
    return new IndexStore(file, undefined, readers, options.queryTimeoutMs ?? QUERY_TIMEOUT_MS_DEFAULT);
  }

  /** A store with only the writer, for building a replacement index off to the side. */
  static async openForBuild(file: string): Promise<IndexStore> {
    removeIndexFiles(file);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const writer = await SqliteConnection.open(file);
    await writer.exec(BUILD_PRAGMAS);
    await writer.exec(`BEGIN; ${schemaSql({ deferred: true })} COMMIT;`);
    return new IndexStore(file, writer, [], QUERY_TIMEOUT_MS_DEFAULT);
  }

  async checkpoint(): Promise<IndexCheckpoint> {
    const rows = await this.writer.all<{ key: string; value: number }>(`SELECT key, value FROM index_state WHERE key IN ('checkpoint', 'checkpoint_at', '${TEXT_CHECKPOINT_KEY}')`);
    const value = (key: string): number => rows.find((row) => row.key === key)?.value ?? 0;
    return { seq: value('checkpoint'), at: value('checkpoint_at'), text_seq: value(TEXT_CHECKPOINT_KEY) };
  }

  /** Empties every table (the index then rebuilds from seq 1). */
  async reset(): Promise<void> {
    // The per-second counts last: deleting the records counts them down first.
    const tables = [
      ...COLLECTIONS.map((collection) => LAYOUTS[collection].table), ...RECONCILIATION_TABLES,
      ...COLLECTIONS.filter((collection) => LAYOUTS[collection].countedTime !== undefined).map(secondCountsTable),
    ];
    const statements = tables.map((table) => `DELETE FROM ${table};`).join('\n');
    // After the rows: their delete triggers take out of the full-text indexes the rows at or below the marks.
    const textKeys = [TEXT_CHECKPOINT_KEY, ...TEXT_TARGETS.map(textRowKey)].map((key) => `'${key}'`).join(', ');
    const clearFullText = [...COLLECTIONS.map(ftsTable), TRANSACTION_TEXTS_FTS].map((fts) => `INSERT INTO ${fts}(${fts}) VALUES ('delete-all');`).join('\n');
    await this.writer.exec(`BEGIN; ${statements} ${clearFullText} DELETE FROM ${TEXT_MARKS_TABLE};
      UPDATE index_state SET value = 0 WHERE key IN ('checkpoint', 'checkpoint_at', ${textKeys}); COMMIT;`);
  }

  /** Runs a read on a free reader connection, interrupting it after the query timeout. */
  async read<T>(work: (reader: SqliteConnection) => Promise<T>): Promise<T> {
    const reader = await this.acquire();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reader.interrupt();
    }, this.queryTimeoutMs);
    try {
      return await work(reader);
    } catch (error) {
      if (timedOut && isInterrupted(error)) throw new QueryTimeoutError(`query ran longer than ${this.queryTimeoutMs} ms`);
      throw error;
    } finally {
      clearTimeout(timer);
      this.release(reader);
    }
  }

  private acquire(): Promise<SqliteConnection> {
    if (this.readers.length === 0) throw new Error('this index store has no readers');
    this.active += 1;
    const reader = this.idle.pop();
    if (reader) return Promise.resolve(reader);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Every acquire counted one read as active; every release ends one, whoever gets the reader next. */
  private release(reader: SqliteConnection): void {
    this.active -= 1;
    const next = this.waiting.shift();
    if (next) {
      next(reader);
      return;
    }
    this.idle.push(reader);
    if (this.active === 0) this.drained?.();
  }

  /** Closes every connection once running reads have finished. */
  async close(): Promise<void> {
    if (this.active > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    for (const reader of this.readers) await reader.close();
    await this.writerConnection?.close();
  }

  /**
   * Finishes a store built off to the side and closes it so the file stands alone (no -wal beside it):
   * it can then be renamed over the live index. The secondary indexes are sorted here while a child
   * process builds the full-text indexes from the same rows (full-text-build.ts); for that the file
   * goes over to WAL mode, so the child reads the rows as committed while this connection writes.
   */
  async closeForMove(): Promise<void> {
    const writer = this.writer;
    const fullTextFile = fullTextFileFor(this.file);
    await writer.exec(`PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; ${FINISH_PRAGMAS}`);
    const fullText = buildFullTextInChild(this.file, fullTextFile);
    try {
      await writer.exec(`BEGIN; ${deferredIndexesSql()} COMMIT;`);
      await fullText.done;
      await writer.run('ATTACH ? AS built', [fullTextFile]);
      await writer.exec(`BEGIN; ${fullTextFromCopySql('built')} COMMIT; DETACH built;`);
      await writer.exec('PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;');
    } catch (error) {
      fullText.cancel();
      await fullText.done.catch(() => undefined);
      throw error;
    } finally {
      fs.rmSync(fullTextFile, { force: true });
    }
    await writer.close();
    // Written without syncs (BUILD_PRAGMAS): on disk as a whole before anything renames it into place.
    const descriptor = fs.openSync(this.file, 'r+');
    try {
      fs.fsyncSync(descriptor);
    } finally {
      fs.closeSync(descriptor);
    }
  }
}

async function openWriter(file: string): Promise<SqliteConnection> {
  let writer = await SqliteConnection.open(file);
  if (!(await hasCurrentSchema(writer))) {
    await writer.close();
    removeIndexFiles(file);
    writer = await SqliteConnection.open(file);
    await writer.exec(WRITER_PRAGMAS);
    await writer.exec(`BEGIN; ${schemaSql()} COMMIT;`);
    return writer;
  }
  await writer.exec(WRITER_PRAGMAS);
  return writer;
}

async function hasCurrentSchema(connection: SqliteConnection): Promise<boolean> {
  try {
    const row = await connection.get<{ value: number }>(`SELECT value FROM index_state WHERE key = 'schema_version'`);
    return row?.value === SCHEMA_VERSION;
  } catch {
    return false; // no such table, or not a database at all
  }
}
