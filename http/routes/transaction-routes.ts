// Transactions: record (queued, synchronous, scheduled, split, bulk, or as a dry run), list, read by id
// and by reference, read a debit's fund lineage, and read where a transaction stands in the log's
// checksum chain. A retry with a reference already used by the same request answers 200 with the
// original instead of 201.

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import { coercedPageQuerySchema } from '../schemas/common-schemas.js';
import { rejectionsOf } from '../../engine/operations.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { balanceProjectionView, projectionView } from '../views/projection-view.js';
import type { BulkCommand, CommandOf } from '../../engine/commands.js';
import type { BalanceProjection, Projection } from '../../engine/projection.js';
import { reject } from '../../engine/rejections.js';
import { accepted, projected, respond } from '../respond.js';
import { LIST_SIZE_CODES, TRANSACTION_VALIDATION_CODES, validateBulk, validateTransaction } from '../schemas/transaction-commands.js';
import { validate } from '../schemas/validation.js';
import { answeredFilteredList } from './filtered-lists.js';
import { z } from 'zod';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { bulkPreviewJsonSchema, projectionJsonSchema, rejectionJsonSchema, rejectionView } from '../views/projection-view.js';
import { bulkShape, includeBalancesQuery, transactionShape } from '../schemas/transaction-schemas.js';
import { balanceView, resultingBalancesJsonSchema } from '../../wire/views.js';
import { transactionJson, transactionJsonSchema, transactionJsonWith, transactionListJson } from '../../wire/transaction-json.js';
import { transactionLineageJsonSchema, transactionLineageView } from '../../wire/lineage-views.js';

const TRANSACTION_ERRORS = rejectionsOf('transaction.create');
const transactionExample = {
  amount: 25, precision: 100, currency: 'USD', reference: 'order-1042', description: 'Order 1042',
  source: 'bln_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e02', destination: 'bln_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e04', skip_queue: true,
};
const bulkResultSchema = z.object({
  batch_id: z.string(),
  status: z.string(),
  transaction_count: z.number().int(),
  failed: z.object({ index: z.number().int(), error: rejectionJsonSchema }).optional(),
  transactions: z.array(z.object({ transaction_id: z.string(), reference: z.string(), status: z.string(), balances: resultingBalancesJsonSchema })).optional()
    .meta({ description: 'With include_balances=true: each recorded item, in order, with the balances it touched as the batch (one write, one seq) left them' }),
});

/** A log record in the checksum chain, and the seq of the transaction's event in it (GET /transactions/:id/log-position). */
const chainRecordSchema = z.object({
  seq: z.number().int().meta({ description: 'The seq of the event in the record that holds the transaction' }),
  record_first_seq: z.number().int(),
  record_last_seq: z.number().int(),
  record_checksum: z.string().meta({ description: 'SHA-256 of the record\'s payload, hex' }),
  prev_checksum: z.string().meta({ description: 'The previous record\'s checksum, hex (zeros for the log\'s first record)' }),
});
const transactionLogPositionSchema = chainRecordSchema.extend({
  transaction_id: z.string(),
  last_changed: chainRecordSchema.nullable().meta({ description: 'The later record holding the transaction\'s newest whole version, or null' }),
});
const transactionLogPositionExample = {
  transaction_id: 'txn_0196a4c2-af66-7173-a5f6-7a8b9c0d1e05', seq: 1042, record_first_seq: 1040, record_last_seq: 1043,
  record_checksum: '5d41402abc4b2a76b9719d911017c592a3f0f1b2c3d4e5f60718293a4b5c6d7e', prev_checksum: '9e107d9d372bb6826bd81d3542a419d6b7c8d9e0f1a2b3c4d5e6f708192a3b4c',
  last_changed: null,
};

const transactionWithBalancesSchema = transactionJsonSchema.extend({ balances: resultingBalancesJsonSchema.optional() });

/** Whether the write asked to be answered with the balances it touched (`?include_balances=true`). */
function includeBalances(query: unknown): boolean {
  return validate(includeBalancesQuery, query, 'TXN_VALIDATION_ERROR').include_balances === 'true';
}

export function transactionRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /transactions', {
    tag: 'Transactions', summary: 'Record a transaction',
    description: 'One of `precise_amount` (with `precision`) and `amount`; `source` or `sources`, `destination` or `destinations` (splits). '
      + 'Queued unless `skip_queue`; a hold with `inflight`; later with `scheduled_for`; nothing written with `dry_run`. '
      + '`preconditions` (at most 16): a balance\'s version, or a condition on one of its fields as the transaction would leave it, '
      + 'judged when the transaction is carried out (docs/decisions-beyond.md). '
      + 'An exchange between currencies: `rate` (decimal text or {numerator, denominator}) and `destination_currency` (with `destination_precision`, '
      + 'and `rounding` down, half_even or up when the converted amount is not whole, else 400 TXN_EXCHANGE_INEXACT) move `precise_amount` into '
      + '`@exchange_<CURRENCY>` and the converted amount from `@exchange_<DESTINATION_CURRENCY>` to the destination, in one record; not with splits.',
    body: transactionShape, bodyExample: transactionExample, invalidCode: 'TXN_VALIDATION_ERROR', query: includeBalancesQuery,
    answers: [
      { status: 201, description: 'Recorded (QUEUED, APPLIED, INFLIGHT or SCHEDULED)', schema: transactionWithBalancesSchema, example: EXAMPLES.transaction },
      { status: 200, description: 'A retry with a used reference and the same request: the original; or a dry run', schema: z.union([transactionJsonSchema, projectionJsonSchema]), example: EXAMPLES.transaction },
    ],
    errors: [...TRANSACTION_ERRORS, ...TRANSACTION_VALIDATION_CODES],
  });
  router.post('/transactions', async (ctx) => {
    const withBalances = includeBalances(ctx.query);
    const { command, dry_run } = validateTransaction(ctx.request.body);
    if (dry_run) {
      await respond(ctx, core, 200, projectionView(await projected(core, { op: 'transaction.create', ...command }), command));
      return;
    }
    if (withBalances) command.include_balances = true;
    const { value, seq } = accepted(await core.run({ op: 'transaction.create', ...command }));
    const answer = value.balances ? transactionJsonWith(value.transaction, { balances: value.balances.map(balanceView) }) : transactionJson(value.transaction);
    await respond(ctx, core, value.created ? 201 : 200, answer, seq);
  });

  describeRoute(router, 'POST /transactions/bulk', {
    tag: 'Transactions', summary: 'Record many transactions in one request (atomic or not)', body: bulkShape, invalidCode: 'TXN_VALIDATION_ERROR', query: includeBalancesQuery,
    bodyExample: { atomic: true, skip_queue: true, transactions: [transactionExample, { ...transactionExample, reference: 'order-1043' }] },
    answers: [
      { status: 201, description: 'The batch', schema: bulkResultSchema, example: { batch_id: 'bulk_0196a4c2-af66-7173-a5f6-7a8b9c0d1e08', status: 'applied', transaction_count: 2 } },
      { status: 202, description: 'With run_async: the batch, with Blnk\'s message (recorded before the answer all the same)', schema: bulkResultSchema.extend({ message: z.string() }) },
      { status: 200, description: 'A dry run: a projection per item, as Blnk answers it', schema: bulkPreviewJsonSchema },
    ],
    errors: [...TRANSACTION_ERRORS, ...TRANSACTION_VALIDATION_CODES, ...LIST_SIZE_CODES],
  });
  router.post('/transactions/bulk', async (ctx) => {
    const withBalances = includeBalances(ctx.query);
    const { command, dry_run, run_async } = validateBulk(ctx.request.body);
    if (dry_run) {
      await respond(ctx, core, 200, await bulkPreview(core, command, run_async));
      return;
    }
    if (withBalances) command.include_balances = true;
    const { value, seq } = accepted(await core.run({ op: 'transaction.bulk', ...command }));
    // Blnk writes batch statuses in lower case: applied, inflight, queued (and Folio's partial).
    const body: Record<string, unknown> = {
      batch_id: value.batch_id,
      status: value.status.toLowerCase(),
      transaction_count: value.transaction_count,
    };
    if (value.failure) {
      body.failed = { index: value.failure.index, error: rejectionView(value.failure.rejection) };
    }
    if (value.items) body.transactions = value.items.map((item) => ({ ...item, balances: item.balances.map(balanceView) }));
    // run_async: Blnk's 202 and message. The batch is recorded before the answer all the same, so the
    // status says how it stands rather than Blnk's "processing".
    if (run_async) {
      await respond(ctx, core, 202, { message: 'Bulk transaction processing started', ...body }, seq);
      return;
    }
    await respond(ctx, core, 201, body, seq);
  });

  describeRoute(router, 'GET /transactions', { tag: 'Transactions', summary: 'List transactions, newest first', query: coercedPageQuerySchema, answers: answers(200, 'A page of transactions', z.array(transactionJsonSchema), [EXAMPLES.transaction]) });
  router.get('/transactions', async (ctx) => {
    const page = validate(coercedPageQuerySchema, ctx.query);
    if (await answeredFilteredList(ctx, core, 'transactions', page)) return;
    await respond(ctx, core, 200, transactionListJson(await core.listTransactions(page.offset, page.limit)));
  });

  describeRoute(router, 'GET /transactions/reference/:reference', { tag: 'Transactions', summary: 'Read a transaction by its reference', answers: answers(200, 'The transaction', transactionJsonSchema, EXAMPLES.transaction), errors: ['TXN_NOT_FOUND'] });
  router.get('/transactions/reference/:reference', async (ctx) => {
    const reference = ctx.params.reference as string;
    const transaction = await core.view.transactionByReference(reference);
    if (!transaction) throw new ApiError('TXN_NOT_FOUND', `no transaction with reference ${reference}`);
    await respond(ctx, core, 200, transactionJson(transaction));
  });

  describeRoute(router, 'GET /transactions/:id/lineage', {
    tag: 'Transactions', summary: 'Fund lineage of a transaction: the tagged funds a debit of a balance that tracks lineage drew on',
    answers: answers(200, 'The allocation', transactionLineageJsonSchema, EXAMPLES.transactionLineage), errors: ['TXN_NOT_FOUND'],
  });
  router.get('/transactions/:id/lineage', async (ctx) => {
    const transactionId = ctx.params.id as string;
    const transaction = await core.view.transaction(transactionId);
    if (!transaction) throw new ApiError('TXN_NOT_FOUND', `Transaction with ID '${transactionId}' not found`);
    await respond(ctx, core, 200, transactionLineageView(transaction));
  });

  describeRoute(router, 'GET /transactions/:id/log-position', {
    tag: 'Transactions', summary: 'Where a transaction stands in the log\'s checksum chain',
    description: 'The log record that first held the transaction (the seq of its event, the record\'s seq range, its SHA-256 and the '
      + 'previous record\'s, which chain the records: `folio verify` checks the chain), and `last_changed`, the later record holding its '
      + 'newest whole version (a hold\'s committed amount, a queued transaction applied), or null. Metadata changes are not counted. '
      + 'Answered once the record is on disk; a standby answers from its own copy of the group\'s log.',
    answers: answers(200, 'The position', transactionLogPositionSchema, transactionLogPositionExample), errors: ['TXN_NOT_FOUND'],
  });
  router.get('/transactions/:id/log-position', async (ctx) => {
    const transactionId = ctx.params.id as string;
    const position = await core.transactionLogPosition(transactionId);
    if (!position) throw new ApiError('TXN_NOT_FOUND', `Transaction with ID '${transactionId}' not found`);
    await respond(ctx, core, 200, { transaction_id: transactionId, ...position.created, last_changed: position.last_changed ?? null });
  });

  describeRoute(router, 'GET /transactions/:id', { tag: 'Transactions', summary: 'Read a transaction', answers: answers(200, 'The transaction', transactionJsonSchema, EXAMPLES.transaction), errors: ['TXN_NOT_FOUND'] });
  router.get('/transactions/:id', async (ctx) => {
    const transactionId = ctx.params.id as string;
    const transaction = await core.view.transaction(transactionId);
    if (!transaction) throw new ApiError('TXN_NOT_FOUND', `transaction ${ctx.params.id} not found`);
    await respond(ctx, core, 200, transactionJson(transaction));
  });
}

/** A note per item whose reference an earlier item of the batch already uses (Blnk's dry run names them). */
function repeatedReferenceNotes(items: readonly { reference: string }[]): string[] {
  const firstAt = new Map<string, number>();
  const notes: string[] = [];
  items.forEach((item, index) => {
    if (item.reference === '') return;
    const first = firstAt.get(item.reference);
    if (first === undefined) firstAt.set(item.reference, index);
    else notes.push(`reference ${item.reference} of item ${index} repeats item ${first}'s: only the first can be recorded`);
  });
  return notes;
}

/**
 * A bulk dry run as Blnk answers it: a projection per item, whether the items were projected against
 * each other (`cumulative`) and, when they were, the batch's combined effect on each balance. Items
 * decided together (skip_queue or atomic: the whole batch is decided at once) are projected one after
 * another in one scope; a queued batch's items are projected each against the balances as they stand,
 * as Blnk does (Folio applies a balance's queued items in the batch's order, which the note says).
 */
async function bulkPreview(core: LedgerCore, command: BulkCommand, runAsync: boolean): Promise<Record<string, unknown>> {
  const items = command.transactions.map((item): CommandOf<'transaction.create'> => ({ op: 'transaction.create', ...item, inflight: item.inflight || command.inflight }));
  const cumulative = command.skip_queue || command.atomic;
  const notes: string[] = [];
  let projections: Projection[];
  let balances: BalanceProjection[] | undefined;
  if (cumulative) {
    ({ projections, balances } = await core.dryRun(items));
  } else {
    notes.push('the items are queued: each is projected on its own against the balances as they stand; queued items of one source balance are applied in the batch\'s order');
    projections = [];
    const seen = new Set<string>();
    for (const item of items) {
      // A reference used earlier in the batch is refused whatever the order, as the real batch refuses it.
      const repeated = item.reference !== '' && seen.has(item.reference);
      seen.add(item.reference);
      projections.push(repeated ? { operation: 'create', would_apply: false, rejection: reject('TXN_DUPLICATE_REFERENCE', `reference ${item.reference} is used by an earlier item of this batch`), balances: [] } : await projected(core, item));
    }
  }
  notes.push(...repeatedReferenceNotes(items));
  const failedIndex = projections.findIndex((projection) => !projection.would_apply);
  if (command.atomic) notes.push('atomic: nothing of the batch is recorded when any item fails');
  else if (cumulative && failedIndex >= 0) notes.push(`the batch stops at its first failing item (${failedIndex}); the items before it are recorded, the ones after it are not`);
  if (runAsync) notes.push('run_async is ignored in a dry run; the projection is returned at once');
  const results = projections.map((projection, index) => projectionView(projection, items[index]));
  const preview: Record<string, unknown> = {
    dry_run: true,
    would_apply: failedIndex < 0,
    cumulative,
    atomic: command.atomic,
    operation: 'bulk',
    transaction_count: failedIndex < 0 ? items.length : command.atomic ? 0 : failedIndex,
    results,
  };
  // The batch's status as the real batch would report it (upper case here, as every dry run's status).
  if (failedIndex < 0) preview.status = !cumulative ? 'QUEUED' : command.inflight ? 'INFLIGHT' : 'APPLIED';
  else {
    preview.failed_index = failedIndex;
    preview.rejection = results[failedIndex]?.rejection;
  }
  if (balances) preview.balances = balances.map(balanceProjectionView);
  if (notes.length > 0) preview.notes = notes;
  return preview;
}
