// The driver of the Postgres peer (schema.sql): one connection to it, or a pool of them (the peer behind
// a service), with npm `pg`. Transfers are one
// call each, a batch is one call that is one database transaction; both run in autocommit, so each call
// is committed durably (synchronous_commit on) before it resolves. Amounts go out and come back as
// decimal text turned into bigint: never a JavaScript number. Refusals come back as values from a
// closed set of codes (Folio's rejection codes where Folio has one), not as thrown errors.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { PostgresConnection } from '../postgres/postgres-server.js';

export const PEER_REFUSAL_CODES = [
  'TXN_INVALID_AMOUNT', 'TXN_INVALID_BATCH', 'TXN_SAME_SOURCE_DESTINATION', 'BAL_NOT_FOUND',
  'TXN_CURRENCY_MISMATCH', 'TXN_INSUFFICIENT_FUNDS', 'TXN_DUPLICATE_REFERENCE',
] as const;
export type PeerRefusalCode = (typeof PEER_REFUSAL_CODES)[number];

/** Connections a pool opens at once while it fills: PostgreSQL starts a process for each. */
const POOL_CONNECTS_AT_ONCE = 32;

/** The SQLSTATE schema.sql raises a refusal with. */
const REFUSAL_SQLSTATE = 'FL001';

export interface PeerTransfer {
  /** '' asks the peer to generate one, as Folio does. */
  reference: string;
  source: string;
  destination: string;
  amount: bigint;
  currency: string;
  allowOverdraft: boolean;
}

export type PeerRefusal = { ok: false; code: PeerRefusalCode; index: number };
export type PeerOutcome = { ok: true } | PeerRefusal;
/** A transfer's outcome: with the id the peer gave the transaction when it was recorded. */
export type PeerTransferOutcome = { ok: true; transactionId: string } | PeerRefusal;

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** schema.sql, found from the source tree or from dist/ (tsc does not copy it). */
export function schemaSql(): string {
  for (const candidate of [path.join(HERE, 'schema.sql'), path.resolve(HERE, '../../../bench/postgres-peer/schema.sql')]) {
    if (fs.existsSync(candidate)) return fs.readFileSync(candidate, 'utf8');
  }
  throw new Error(`schema.sql not found beside ${HERE}`);
}

function refusal(error: unknown): PeerRefusal {
  const { code, message, detail } = error as { code?: string; message?: string; detail?: string };
  if (code !== REFUSAL_SQLSTATE) throw error;
  if (!(PEER_REFUSAL_CODES as readonly string[]).includes(message ?? '')) throw new Error(`unknown peer refusal ${message}`);
  return { ok: false, code: message as PeerRefusalCode, index: Number(detail) };
}

export class PeerLedger {
  private constructor(private readonly client: pg.Client | pg.Pool) {}

  static async connect(connection: PostgresConnection): Promise<PeerLedger> {
    const client = new pg.Client(connection);
    await client.connect();
    return new PeerLedger(client);
  }

  /**
   * Over a pool of `connections` connections, all opened here and kept open (each call takes one while it
   * runs), so no call waits for a connection to be set up, as none does on a connection of its own.
   */
  static async pooled(connection: PostgresConnection, connections: number): Promise<PeerLedger> {
    const pool = new pg.Pool({ ...connection, max: connections, idleTimeoutMillis: 0 });
    const opened: pg.PoolClient[] = [];
    try {
      while (opened.length < connections) {
        const batch = Math.min(POOL_CONNECTS_AT_ONCE, connections - opened.length);
        opened.push(...await Promise.all(Array.from({ length: batch }, () => pool.connect())));
      }
    } finally {
      for (const client of opened) client.release();
    }
    return new PeerLedger(pool);
  }

  /** Creates the tables and functions in an empty database. */
  async install(): Promise<void> {
    await this.client.query(schemaSql());
  }

  async createBalances(ids: string[], currency: string): Promise<void> {
    await this.client.query('SELECT ledger_create_balances($1, $2)', [ids, currency]);
  }

  async transfer(transfer: PeerTransfer): Promise<PeerTransferOutcome> {
    try {
      const { rows } = await this.client.query<{ id: string }>({
        name: 'ledger_transfer',
        text: 'SELECT ledger_transfer($1, $2, $3, $4, $5, $6)::text AS id',
        values: [transfer.reference, transfer.source, transfer.destination, transfer.amount.toString(), transfer.currency, transfer.allowOverdraft],
      });
      return { ok: true, transactionId: rows[0]!.id };
    } catch (error) {
      return refusal(error);
    }
  }

  /** All the transfers or none, in one database transaction; every item must be in `currency`. */
  async transferBatch(transfers: PeerTransfer[], currency: string): Promise<PeerOutcome> {
    try {
      await this.client.query({
        name: 'ledger_transfer_batch',
        text: 'SELECT ledger_transfer_batch($1, $2, $3, $4, $5, $6)',
        values: [
          transfers.map((item) => item.reference), transfers.map((item) => item.source), transfers.map((item) => item.destination),
          transfers.map((item) => item.amount.toString()), currency, transfers.map((item) => item.allowOverdraft),
        ],
      });
      return { ok: true };
    } catch (error) {
      return refusal(error);
    }
  }

  async balance(id: string): Promise<bigint | undefined> {
    const { rows } = await this.client.query<{ balance: string }>('SELECT balance::text FROM balances WHERE balance_id = $1', [id]);
    return rows[0] === undefined ? undefined : BigInt(rows[0].balance);
  }

  /** Per currency: the sum of balances, and of credits minus debits (both must be zero). */
  async sums(): Promise<Map<string, { balance: bigint; creditsLessDebits: bigint }>> {
    const { rows } = await this.client.query<{ currency: string; balance: string; net: string }>(
      'SELECT currency, sum(balance)::text AS balance, (sum(credit_balance) - sum(debit_balance))::text AS net FROM balances GROUP BY currency',
    );
    return new Map(rows.map((row) => [row.currency, { balance: BigInt(row.balance), creditsLessDebits: BigInt(row.net) }]));
  }

  async transactionCount(): Promise<number> {
    const { rows } = await this.client.query<{ count: string }>('SELECT count(*)::text AS count FROM transactions');
    return Number(rows[0]!.count);
  }

  /** Vacuums and analyzes the tables, then checkpoints: what a database settles into after bulk loading. */
  async maintain(): Promise<void> {
    await this.client.query('VACUUM (ANALYZE) balances, transactions');
    await this.client.query('CHECKPOINT');
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
