// Answering only with what is durable. The body is rendered the moment the handler has it (so it shows
// the state as of `seq`), then the response waits until the log holds everything up to `seq` on disk.
// A client therefore never sees a value that a crash could take back. The answer carries the seq it
// reflects in X-Folio-Seq, which a later request may send back to any node (read-your-writes.ts).

import type Koa from 'koa';
import { fromRejection } from './api-error.js';
import { toJsonText } from '../wire/json-text.js';
import type { LedgerCore } from './ports/ledger-core.js';
import { INDEX_SEQ_HEADER, SEQ_HEADER } from './middleware/read-your-writes.js';
import type { DryRunCommand, Outcome } from '../engine/ledger-engine.js';
import type { Projection } from '../engine/projection.js';

export async function respond(ctx: Koa.Context, core: LedgerCore, status: number, value: unknown, seq = core.visibleSeq()): Promise<void> {
  const body = toJsonText(value);
  await core.durable(seq);
  ctx.set(SEQ_HEADER, String(seq));
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = body;
}

/**
 * An answer read from a store that takes durable records alone (the balance history), exact as of `seq`
 * and depending on nothing after `indexSeq`, the seq the store had reached: it shows nothing a crash
 * could take back, so it goes at once, without waiting for `seq` to be durable.
 */
export function respondFromIndex(ctx: Koa.Context, status: number, value: unknown, seq: number, indexSeq: number): void {
  ctx.set(SEQ_HEADER, String(seq));
  ctx.set(INDEX_SEQ_HEADER, String(indexSeq));
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = toJsonText(value);
}

/** The value of an accepted command, or the rejection as an API error. */
export function accepted<T>(outcome: Outcome<T>): { value: T; seq: number } {
  if (!outcome.ok) throw fromRejection(outcome.rejection);
  return outcome;
}

/** The dry run of one command. */
export async function projected(core: LedgerCore, command: DryRunCommand): Promise<Projection> {
  const [projection] = (await core.dryRun([command])).projections;
  if (!projection) throw new Error(`no projection of ${command.op}`);
  return projection;
}
