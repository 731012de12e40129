// Transactions: record (queued, synchronous, scheduled, split, bulk, or as a dry run), list, and read by
// id and by reference. A retry with a reference already used by the same request answers 200 with the
// original instead of 201.

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import { IDENTIFIER_LENGTH_MAX, pageQuerySchema, REFERENCE_LENGTH_MAX } from '../common-schemas.js';
import type { LedgerCore } from '../ledger-core.js';
import { projectionView } from '../projection-view.js';
import { accepted, respond } from '../respond.js';
import { validateBulk, validateTransaction } from '../transaction-commands.js';
import { validate } from '../validation.js';
import { transactionJson, transactionListJson } from '../../wire/transaction-json.js';
import { answeredFilteredList } from './filtered-lists.js';

export function transactionRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

  router.post('/transactions', async (ctx) => {
    const { command, dry_run } = validateTransaction(ctx.request.body);
    if (dry_run) {
      await respond(ctx, core, 200, projectionView(engine.projectTransaction(command), command));
      return;
    }
    const { value, seq } = accepted(engine.createTransaction(command));
    await respond(ctx, core, value.created ? 201 : 200, transactionJson(value.transaction), seq);
  });

  router.post('/transactions/bulk', async (ctx) => {
    const { command, dry_run, run_async } = validateBulk(ctx.request.body);
    if (dry_run) {
      await respond(ctx, core, 200, projectionView(engine.projectBulk(command)));
      return;
    }
    const { value, seq } = accepted(engine.createBulk(command));
    // Blnk writes batch statuses in lower case: applied, inflight, queued (and Folio's partial).
    const body: Record<string, unknown> = {
      batch_id: value.batch_id,
      status: value.status.toLowerCase(),
      transaction_count: value.transaction_count,
    };
    if (value.failure) {
      const { code, reason, message } = value.failure.rejection;
      body.failed = { index: value.failure.index, error: { code, reason, message } };
    }
    // run_async: Blnk's 202 and message. The batch is recorded before the answer all the same, so the
    // status says how it stands rather than Blnk's "processing".
    if (run_async) {
      await respond(ctx, core, 202, { message: 'Bulk transaction processing started', ...body }, seq);
      return;
    }
    await respond(ctx, core, 201, body, seq);
  });

  router.get('/transactions', async (ctx) => {
    const page = validate(pageQuerySchema, ctx.query);
    if (await answeredFilteredList(ctx, core, 'transactions', page)) return;
    await respond(ctx, core, 200, transactionListJson(core.listTransactions(page.offset, page.limit)));
  });

  router.get('/transactions/reference/:reference', async (ctx) => {
    const reference = ctx.params.reference as string;
    // Nothing stored is longer than the limit, and the LMDB lookup store throws on keys past its buffer.
    const transactionId = reference.length > REFERENCE_LENGTH_MAX ? undefined : engine.state.transactions.idForReference(reference);
    const transaction = transactionId === undefined ? undefined : engine.state.transaction(transactionId);
    if (!transaction) throw new ApiError('TXN_NOT_FOUND', `no transaction with reference ${reference}`);
    await respond(ctx, core, 200, transactionJson(transaction));
  });

  router.get('/transactions/:id', async (ctx) => {
    const transactionId = ctx.params.id as string;
    const transaction = transactionId.length > IDENTIFIER_LENGTH_MAX ? undefined : engine.state.transaction(transactionId);
    if (!transaction) throw new ApiError('TXN_NOT_FOUND', `transaction ${ctx.params.id} not found`);
    await respond(ctx, core, 200, transactionJson(transaction));
  });
}
