// A minimal Koa + koa-body service, in one of two modes chosen by the environment:
//
// - FOLIO_BENCH_BARE_RESPONSE (the http bench's baseline, and the peers bench's static line): answers
//   POST /transactions with 201 and the same JSON a Folio transfer returns. It does no ledger work and
//   waits for no disk, so it marks what the framework alone costs here.
// - FOLIO_BENCH_PEER, JSON `{"connection": {...}, "pool_connections": n}` (the peers bench): the Postgres
//   peer (bench/postgres-peer) behind the same server, as a small Node service on PostgreSQL would put
//   it. POST /transactions calls the peer's transfer, POST /transactions/bulk its batch (all or
//   nothing), each through a pg pool of `pool_connections` connections, all open before it listens;
//   the answer (201) is the recorded transaction or batch, sent once PostgreSQL has committed it (fsync
//   and synchronous_commit on). A refusal is a 422 with the peer's code, a malformed request a 400.
//
// It prints its address like `folio serve` does and exits when the bench closes its stdin.

import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { PeerLedger, type PeerRefusal, type PeerTransfer } from './postgres-peer/peer-ledger.js';
import type { PostgresConnection } from './postgres/postgres-server.js';

/** Transfers in one bulk request to the peer: Folio's own limit (http/schemas/transaction-schemas.ts). */
const PEER_BULK_TRANSFERS_MAX = 10_000;
/** A bulk of the largest size at a few hundred bytes a transfer. */
const PEER_BODY_BYTES_MAX = 8 * 1024 * 1024;

type Context = Koa.ParameterizedContext;

function staticHandler(responseText: string): Koa.Middleware {
  // Koa serialises an object body on every response, as a typical Koa handler's reply would be.
  const response: unknown = JSON.parse(responseText);
  return (ctx: Context) => {
    if (ctx.method !== 'POST' || ctx.path !== '/transactions') {
      ctx.status = 404;
      return;
    }
    if (typeof ctx.request.body !== 'object' || ctx.request.body === null) ctx.throw(400, 'expected a JSON object');
    ctx.status = 201;
    ctx.body = response;
  };
}

function text(ctx: Context, value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') ctx.throw(400, `${field} must be a non-empty string`);
  return value;
}

/** A whole amount above zero, as decimal text or a JSON number that is still exact. */
function amount(ctx: Context, value: unknown): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return BigInt(value);
  if (typeof value === 'string' && /^[1-9][0-9]{0,39}$/.test(value)) return BigInt(value);
  return ctx.throw(400, 'precise_amount must be a whole number above zero');
}

function peerTransfer(ctx: Context, body: unknown): PeerTransfer {
  if (typeof body !== 'object' || body === null) ctx.throw(400, 'expected a JSON object');
  const fields = body as Record<string, unknown>;
  if (fields.allow_overdraft !== undefined && typeof fields.allow_overdraft !== 'boolean') ctx.throw(400, 'allow_overdraft must be a boolean');
  if (fields.reference !== undefined && typeof fields.reference !== 'string') ctx.throw(400, 'reference must be a string');
  return {
    reference: (fields.reference as string | undefined) ?? '',
    source: text(ctx, fields.source, 'source'),
    destination: text(ctx, fields.destination, 'destination'),
    amount: amount(ctx, fields.precise_amount),
    currency: text(ctx, fields.currency, 'currency'),
    allowOverdraft: (fields.allow_overdraft as boolean | undefined) ?? false,
  };
}

function refuse(ctx: Context, outcome: PeerRefusal): void {
  ctx.status = 422;
  ctx.body = { error: { code: outcome.code, index: outcome.index } };
}

function peerHandler(ledger: PeerLedger): Koa.Middleware {
  return async (ctx: Context) => {
    if (ctx.method === 'POST' && ctx.path === '/transactions') {
      const transfer = peerTransfer(ctx, ctx.request.body);
      const outcome = await ledger.transfer(transfer);
      if (!outcome.ok) return refuse(ctx, outcome);
      ctx.status = 201;
      ctx.body = {
        transaction_id: outcome.transactionId,
        reference: transfer.reference === '' ? `ref_${outcome.transactionId}` : transfer.reference,
        source: transfer.source,
        destination: transfer.destination,
        precise_amount: transfer.amount.toString(),
        currency: transfer.currency,
        allow_overdraft: transfer.allowOverdraft,
        status: 'APPLIED',
      };
      return;
    }
    if (ctx.method === 'POST' && ctx.path === '/transactions/bulk') {
      const items = (ctx.request.body as { transactions?: unknown } | undefined)?.transactions;
      if (!Array.isArray(items) || items.length === 0 || items.length > PEER_BULK_TRANSFERS_MAX) {
        ctx.throw(400, `transactions must be a list of 1 to ${PEER_BULK_TRANSFERS_MAX}`);
      }
      const transfers = items.map((item) => peerTransfer(ctx, item));
      const currency = transfers[0]!.currency;
      if (transfers.some((transfer) => transfer.currency !== currency)) ctx.throw(400, 'a bulk is in one currency');
      const outcome = await ledger.transferBatch(transfers, currency);
      if (!outcome.ok) return refuse(ctx, outcome);
      ctx.status = 201;
      ctx.body = { batch_id: `bulk_${crypto.randomUUID()}`, status: 'applied', transaction_count: transfers.length };
      return;
    }
    ctx.status = 404;
  };
}

async function chosenHandler(): Promise<{ handler: Koa.Middleware; close(): Promise<void> }> {
  const responseText = process.env.FOLIO_BENCH_BARE_RESPONSE;
  const peerText = process.env.FOLIO_BENCH_PEER;
  if (responseText) return { handler: staticHandler(responseText), close: async () => undefined };
  if (peerText) {
    const peer = JSON.parse(peerText) as { connection: PostgresConnection; pool_connections: number };
    if (!Number.isInteger(peer.pool_connections) || peer.pool_connections < 1) throw new Error('FOLIO_BENCH_PEER: pool_connections must be a whole number above zero');
    const ledger = await PeerLedger.pooled(peer.connection, peer.pool_connections);
    return { handler: peerHandler(ledger), close: () => ledger.close() };
  }
  process.stderr.write('neither FOLIO_BENCH_BARE_RESPONSE nor FOLIO_BENCH_PEER is set\n');
  process.exit(2);
}

// The pool is full before the server listens: the bench waits for the address it prints.
const chosen = await chosenHandler();
const app = new Koa();
app.use(koaBody({ jsonLimit: PEER_BODY_BYTES_MAX }));
app.use(chosen.handler);

const server = http.createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`listening on http://${address}:${port}\n`);
});

const exit = (): void => void chosen.close().finally(() => process.exit(0));
// The bench owns this process: when it goes away (stdin closes), so does the server.
process.stdin.resume();
process.stdin.on('end', exit);
process.on('SIGTERM', () => {
  server.close(exit);
  server.closeAllConnections();
});
