// Opening a PostgreSQL connection for replication, with a limit on everything that can hang: the
// connection attempt, each query (client side, so a database that stops answering is noticed even when
// the network swallows packets), each statement (server side), and TCP keepalive so a dead peer is
// found. A connection error is reported once through `onBroken` rather than as an unhandled 'error'
// event (which would end the process); a broken client is never reused: its owner opens a new one.

import pg from 'pg';

export interface ConnectionLimits {
  connect_timeout_ms: number;
  /** Client-side bound on each query; a query past it is failed and the connection dropped. */
  query_timeout_ms: number;
  /** Server-side bound on each statement. */
  statement_timeout_ms: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  connect_timeout_ms: 2_000,
  query_timeout_ms: 2_000,
  statement_timeout_ms: 2_000,
};

export interface ConnectionOptions {
  url: string;
  limits: ConnectionLimits;
  /** Shown in pg_stat_activity: which node and what for. */
  application_name: string;
  /** Sends queries without waiting for the previous answers (answers still come in order). */
  pipeline?: boolean;
  onBroken?: (error: Error) => void;
}

export type PostgresClient = pg.Client;

/** A connected client, or a rejection after `connect_timeout_ms`. */
export async function connectPostgres(options: ConnectionOptions): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: options.url,
    application_name: options.application_name.slice(0, 63),
    connectionTimeoutMillis: options.limits.connect_timeout_ms,
    query_timeout: options.limits.query_timeout_ms,
    statement_timeout: options.limits.statement_timeout_ms,
    lock_timeout: options.limits.statement_timeout_ms,
    idle_in_transaction_session_timeout: options.limits.statement_timeout_ms * 2,
    keepAlive: true,
    keepAliveInitialDelayMillis: 1_000,
    ...(options.pipeline ? { pipeline: true } : {}),
  } as pg.ClientConfig);
  let reported = false;
  const broken = (error: Error): void => {
    if (reported) return;
    reported = true;
    options.onBroken?.(error);
  };
  client.on('error', broken);
  client.on('end', () => broken(new Error('the connection to PostgreSQL ended')));
  try {
    await client.connect();
  } catch (error) {
    reported = true;
    void client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/** Closes a client without waiting for a database that may not answer. */
export function dropClient(client: pg.Client | undefined): void {
  if (!client) return;
  void client.end().catch(() => undefined);
  // end() waits for the server's goodbye; a partitioned server never sends it.
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
