// One SQLite connection with promises. node-sqlite3 runs every statement on libuv's thread pool, so the
// event loop only pays for binding parameters and building result rows. Connections are put in
// serialized mode: statements run one after another in the order they were issued, which lets the
// writer queue a whole batch (BEGIN ... COMMIT) without awaiting each statement.

import sqlite3 from 'sqlite3';

export type SqlValue = string | number | null;

/** The largest `PRAGMA mmap_size` worth asking for: SQLite's default build caps it just under 2 GiB. */
export const MMAP_BYTES_MAX = 2 ** 31;
/** Parameters may also be bytes (bound as a BLOB). */
export type SqlParameter = SqlValue | Buffer;

export class SqliteConnection {
  private constructor(private readonly db: sqlite3.Database, readonly file: string) {}

  static open(file: string, options: { readOnly?: boolean } = {}): Promise<SqliteConnection> {
    const mode = options.readOnly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
    return new Promise((resolve, reject) => {
      const db = new sqlite3.Database(file, mode, (error) => {
        if (error) reject(error);
        else {
          db.serialize();
          resolve(new SqliteConnection(db, file));
        }
      });
    });
  }

  /** Runs several statements of trusted SQL (schema, pragmas). Never used with client input. */
  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.db.exec(sql, (error) => (error ? reject(error) : resolve()));
    });
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return new Promise((resolve, reject) => {
      this.db.run(sql, params, function onRun(error) {
        if (error) reject(error);
        else resolve(this.changes);
      });
    });
  }

  all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.db.all<T>(sql, params, (error, rows) => (error ? reject(error) : resolve(rows)));
    });
  }

  async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    const rows = await this.all<T>(sql, params);
    return rows[0];
  }

  /** Runs `work` inside one read transaction, so every statement of it reads the same commit. */
  async inReadTransaction<T>(work: () => Promise<T>): Promise<T> {
    await this.run('BEGIN');
    try {
      return await work();
    } finally {
      await this.run('COMMIT').catch(() => this.run('ROLLBACK').catch(() => undefined));
    }
  }

  /** A statement compiled once and run many times (the writer's upserts). */
  prepare(sql: string): PreparedStatement {
    return new PreparedStatement(this.db.prepare(sql));
  }

  /** Stops whatever statement is running on this connection; it fails with SQLITE_INTERRUPT. */
  interrupt(): void {
    this.db.interrupt();
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.db.close((error) => (error ? reject(error) : resolve()));
    });
  }
}

export class PreparedStatement {
  constructor(private readonly statement: sqlite3.Statement) {}

  run(params: readonly SqlParameter[]): Promise<number> {
    return new Promise((resolve, reject) => {
      this.statement.run(params, function onRun(error) {
        if (error) reject(error);
        else resolve(this.changes);
      });
    });
  }

  finalize(): Promise<void> {
    return new Promise((resolve) => {
      this.statement.finalize(() => resolve());
    });
  }
}

export function isInterrupted(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'SQLITE_INTERRUPT';
}
