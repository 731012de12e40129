// Reconciliation over HTTP: uploads of statements, matching rules, runs (background and instant), a run's
// status and its results page by page. Paths as the public Blnk ledger has them (../shared/spec/decisions.md).
//   POST   /reconciliation/upload                 multipart: `file` (CSV or JSON array) and `source`
//   GET    /reconciliation/uploads                ?limit&offset, newest first
//   POST   /reconciliation/matching-rules         GET (list)   GET|PUT|DELETE /reconciliation/matching-rules/:id
//   POST   /reconciliation/start                  201 {reconciliation_id}, runs in the background
//   POST   /reconciliation/start-instant          200 with the finished run, its matches and unmatched records
//   GET    /reconciliation/:id                    the run's record (status, progress, counts)
//   GET    /reconciliation/:id/matches            ?limit&offset, in upload order
//   GET    /reconciliation/:id/unmatched          likewise, each with its record and the reason

import { Writable } from 'node:stream';
import type { Router } from '@koa/router';
import type Koa from 'koa';
import { koaBody } from 'koa-body';
import type { ExternalRecord, ReconciliationMatch, ReconciliationRecord } from '../../engine/reconciliation-records.js';
import type { RunResults } from '../../engine/decide-reconciliation.js';
import {
  externalRecordView,
  matchingRuleView,
  matchView,
  reconciliationView,
  unmatchedView,
  uploadView,
} from '../../wire/reconciliation-views.js';
import { ApiError } from '../api-error.js';
import { NAME_LENGTH_MAX, pageQuerySchema } from '../schemas/common-schemas.js';
import { fileKind, recordsOfFile, UploadRefusal } from '../schemas/external-records-input.js';
import type { BodyBytesInFlight } from '../server/body-bytes-in-flight.js';
import { BODY_BYTES_MAX, BodyHold, countedBody } from '../middleware/json-body.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { answered } from '../views/query-answers.js';
import type { ReconciliationPort } from '../ports/reconciliation-port.js';
import { instantRequestFrom, resultsPageSchema, ruleCommandFrom, startCommandFrom } from '../schemas/reconciliation-schemas.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { z } from 'zod';

/** The route that reads multipart bodies itself (json-body.ts lets them through). */
export const UPLOAD_PATH = '/reconciliation/upload';
const UPLOADS_PATH = '/reconciliation/uploads';

export function reconciliationRoutes(
  router: Router, core: LedgerCore, port: ReconciliationPort, limits: { bodyBytesMax?: number; bodyBytesInFlight?: BodyBytesInFlight } = {},
): void {
  describeReconciliationRoutes(router);

  router.post(UPLOAD_PATH, multipartReader(limits.bodyBytesMax ?? BODY_BYTES_MAX, limits.bodyBytesInFlight), async (ctx) => {
    const upload = ctx.state.upload as ReadUpload | undefined;
    if (!upload) throw uploadFailed('send the statement as multipart/form-data: a `file` field (CSV or JSON) and a `source` field', { field: 'file' });
    const source = upload.source.trim();
    if (source === '') throw uploadFailed('source: is required (where the records come from, e.g. a bank)', { field: 'source' });
    if (source.length > NAME_LENGTH_MAX) throw uploadFailed(`source: must be at most ${NAME_LENGTH_MAX} characters`, { field: 'source' });
    let records: ExternalRecord[];
    try {
      records = recordsOfFile(fileKind(upload.name, upload.type, upload.text), upload.text);
    } catch (error) {
      if (error instanceof UploadRefusal) throw uploadFailed(error.message, error.details);
      throw error;
    }
    const { value, seq } = accepted(await core.run({ op: 'reconciliation.upload', upload: { source, kind: 'file', records } }));
    await respond(ctx, core, 201, uploadView(value), seq);
  });

  router.post('/reconciliation/matching-rules', async (ctx) => {
    const { value, seq } = accepted(await core.run({ op: 'matching_rule.create', rule: ruleCommandFrom(ctx.request.body) }));
    await respond(ctx, core, 201, matchingRuleView(value), seq);
  });

  router.get('/reconciliation/matching-rules', async (ctx) => {
    await respond(ctx, core, 200, (await core.view.matchingRules()).map(matchingRuleView));
  });

  router.get('/reconciliation/matching-rules/:id', async (ctx) => {
    const rule = await core.view.matchingRule(ctx.params.id as string);
    if (!rule) throw new ApiError('RECON_RULE_NOT_FOUND', `matching rule ${ctx.params.id} not found`);
    await respond(ctx, core, 200, matchingRuleView(rule));
  });

  router.put('/reconciliation/matching-rules/:id', async (ctx) => {
    const ruleId = ctx.params.id as string;
    if (!(await core.view.matchingRule(ruleId))) throw new ApiError('RECON_RULE_NOT_FOUND', `matching rule ${ruleId} not found`);
    const { value, seq } = accepted(await core.run({ op: 'matching_rule.update', rule_id: ruleId, rule: ruleCommandFrom(ctx.request.body) }));
    await respond(ctx, core, 200, matchingRuleView(value), seq);
  });

  router.delete('/reconciliation/matching-rules/:id', async (ctx) => {
    const { seq } = accepted(await core.run({ op: 'matching_rule.delete', rule_id: ctx.params.id as string }));
    await respond(ctx, core, 200, { message: 'Matching rule deleted successfully' }, seq);
  });

  router.post('/reconciliation/start', async (ctx) => {
    const command = startCommandFrom(ctx.request.body);
    const { value, seq } = accepted(await port.startBackground(command, command.dry_run));
    await respond(ctx, core, 201, { reconciliation_id: value.reconciliation_id, status: value.status, is_dry_run: value.is_dry_run }, seq);
  });

  router.post('/reconciliation/start-instant', async (ctx) => {
    const request = instantRequestFrom(ctx.request.body);
    const { value, seq } = accepted(await port.runInstant(request, request.records, request.dry_run));
    await respond(ctx, core, 200, instantView(value.record, value.results, request.records), seq);
  });

  // Before /reconciliation/:id, which would take `uploads` for a run's id.
  router.get(UPLOADS_PATH, async (ctx) => {
    const page = validate(pageQuerySchema, ctx.query);
    await respond(ctx, core, 200, (await core.view.uploads(page)).map(uploadView));
  });

  router.get('/reconciliation/:id', async (ctx) => {
    await respond(ctx, core, 200, reconciliationView(await runOf(port, ctx.params.id as string)));
  });

  router.get('/reconciliation/:id/matches', async (ctx) => {
    const visibleSeq = core.visibleSeq();
    const run = await runOf(port, ctx.params.id as string);
    const page = validate(resultsPageSchema, ctx.query);
    const dry = await port.dryRun(run.reconciliation_id);
    const matches = dry
      ? dry.results.matches.slice(page.offset, page.offset + page.limit)
      : answered(await port.matches(run.reconciliation_id, page.offset, page.limit, visibleSeq));
    await respond(ctx, core, 200, listView(run, run.matched_transactions, page, matches.map(matchView)), visibleSeq);
  });

  router.get('/reconciliation/:id/unmatched', async (ctx) => {
    const visibleSeq = core.visibleSeq();
    const run = await runOf(port, ctx.params.id as string);
    const page = validate(resultsPageSchema, ctx.query);
    const dry = await port.dryRun(run.reconciliation_id);
    const entries = dry
      ? dry.results.unmatched.slice(page.offset, page.offset + page.limit)
        .map((entry) => ({ reason: entry.reason, record: dry.records[entry.position] as ExternalRecord }))
      : answered(await port.unmatched(run.reconciliation_id, run.upload_id, page.offset, page.limit, visibleSeq));
    const data = entries.map((entry) => unmatchedView(entry.reason, entry.record, run.source));
    await respond(ctx, core, 200, listView(run, run.unmatched_transactions, page, data), visibleSeq);
  });
}

// ---- API reference (http/openapi/route-docs.ts): the answers' schemas, open to added fields ----

const TAG = 'Reconciliation';
const uploadSchema = z.looseObject({ upload_id: z.string(), record_count: z.number().int(), source: z.string(), status: z.string(), created_at: z.string() }).meta({ id: 'ReconciliationUpload' });
const ruleSchema = z.looseObject({
  rule_id: z.string(), name: z.string(), description: z.string(),
  criteria: z.array(z.looseObject({ field: z.string(), operator: z.string(), allowable_drift: z.number().optional() })),
}).meta({ id: 'MatchingRule' });
export const reconciliationJsonSchema = z.looseObject({
  reconciliation_id: z.string(), upload_id: z.string(), source: z.string(), status: z.enum(['started', 'in_progress', 'completed', 'failed']),
  strategy: z.string(), matched_transactions: z.number().int(), unmatched_transactions: z.number().int(),
  processed_count: z.number().int(), total_count: z.number().int(), is_dry_run: z.boolean(),
}).meta({ id: 'Reconciliation' });
const matchSchema = z.looseObject({
  external_transaction_id: z.string(), internal_transaction_id: z.string(), internal_transaction_ids: z.array(z.string()), rule_id: z.string(),
  amount_difference: z.number(), precise_amount_difference: z.number().int(), difference_precision: z.number().int(), time_difference_seconds: z.number(),
});
const unmatchedSchema = z.looseObject({ external_transaction_id: z.string(), reason: z.string(), record: z.looseObject({}) });
const pageOf = (item: z.ZodType): z.ZodType => z.looseObject({ reconciliation_id: z.string(), status: z.string(), total_count: z.number().int(), offset: z.number().int(), limit: z.number().int(), data: z.array(item) });
const ruleBody = z.object({
  name: z.string(), description: z.string().optional(),
  criteria: z.array(z.object({ field: z.enum(['amount', 'currency', 'reference', 'description', 'date']), operator: z.enum(['equals', 'contains', 'greater_than', 'less_than', 'before', 'after']), allowable_drift: z.number().optional() })),
});
const runFields = {
  strategy: z.enum(['one_to_one', 'one_to_many', 'many_to_one']), grouping_criteria: z.string().optional(), matching_rule_ids: z.array(z.string()), dry_run: z.boolean().optional(),
};
const externalRecordBody = z.object({ id: z.string(), amount: z.union([z.number(), z.string()]), currency: z.string(), reference: z.string(), description: z.string(), date: z.string(), source: z.string().optional() });

function describeReconciliationRoutes(router: Router): void {
  describeRoute(router, `POST ${UPLOAD_PATH}`, {
    tag: TAG, summary: 'Upload a statement (multipart: `file`, CSV or a JSON array, and `source`)',
    description: 'A bad row refuses the whole upload, naming its line and field; nothing of it is stored.',
    answers: answers(201, 'The upload', uploadSchema), errors: ['RECON_UPLOAD_FAILED'],
  });
  describeRoute(router, `GET ${UPLOADS_PATH}`, { tag: TAG, summary: 'List uploaded statements, newest first', query: pageQuerySchema, answers: answers(200, 'The uploads', z.array(uploadSchema)) });
  describeRoute(router, 'POST /reconciliation/matching-rules', { tag: TAG, summary: 'Create a matching rule', body: ruleBody, answers: answers(201, 'The rule', ruleSchema), errors: ['RECON_RULE_INVALID'], invalidCode: 'RECON_RULE_INVALID' });
  describeRoute(router, 'GET /reconciliation/matching-rules', { tag: TAG, summary: 'List matching rules', answers: answers(200, 'The rules', z.array(ruleSchema)) });
  describeRoute(router, 'GET /reconciliation/matching-rules/:id', { tag: TAG, summary: 'Read a matching rule', answers: answers(200, 'The rule', ruleSchema), errors: ['RECON_RULE_NOT_FOUND'] });
  describeRoute(router, 'PUT /reconciliation/matching-rules/:id', { tag: TAG, summary: 'Replace a matching rule', body: ruleBody, answers: answers(200, 'The rule', ruleSchema), errors: ['RECON_RULE_INVALID', 'RECON_RULE_NOT_FOUND'], invalidCode: 'RECON_RULE_INVALID' });
  describeRoute(router, 'DELETE /reconciliation/matching-rules/:id', { tag: TAG, summary: 'Delete a matching rule', answers: answers(200, 'Deleted', z.object({ message: z.string() })), errors: ['RECON_RULE_NOT_FOUND'] });
  describeRoute(router, 'POST /reconciliation/start', {
    tag: TAG, summary: 'Start a background reconciliation of an upload', body: z.object({ upload_id: z.string(), ...runFields }),
    answers: answers(201, 'The run, started', z.looseObject({ reconciliation_id: z.string(), status: z.string(), is_dry_run: z.boolean() })),
    errors: ['RECON_UPLOAD_NOT_FOUND', 'RECON_RULE_NOT_FOUND', 'RECON_MATCHING_RULES_REQUIRED'],
  });
  describeRoute(router, 'POST /reconciliation/start-instant', {
    tag: TAG, summary: 'Reconcile up to 10,000 records at once', body: z.object({ external_transactions: z.array(externalRecordBody), ...runFields }),
    answers: answers(200, 'The finished run with its matches and unmatched records', z.looseObject({ reconciliation_id: z.string(), matches: z.array(matchSchema), unmatched: z.array(unmatchedSchema) })),
    errors: ['RECON_EXTERNAL_TXNS_REQUIRED', 'RECON_RULE_NOT_FOUND', 'RECON_MATCHING_RULES_REQUIRED'],
  });
  describeRoute(router, 'GET /reconciliation/:id', { tag: TAG, summary: 'Read a reconciliation (status, progress, counts)', answers: answers(200, 'The run', reconciliationJsonSchema), errors: ['RECON_NOT_FOUND'] });
  describeRoute(router, 'GET /reconciliation/:id/matches', { tag: TAG, summary: "Page through a run's matches", query: resultsPageSchema, answers: answers(200, 'A page of matches', pageOf(matchSchema)), errors: ['RECON_NOT_FOUND'] });
  describeRoute(router, 'GET /reconciliation/:id/unmatched', { tag: TAG, summary: "Page through a run's unmatched records", query: resultsPageSchema, answers: answers(200, 'A page of unmatched records', pageOf(unmatchedSchema)), errors: ['RECON_NOT_FOUND'] });
}

async function runOf(port: ReconciliationPort, reconciliationId: string): Promise<ReconciliationRecord> {
  const run = await port.record(reconciliationId);
  if (!run) throw new ApiError('RECON_NOT_FOUND', `reconciliation ${reconciliationId} not found`);
  return run;
}

function listView(run: ReconciliationRecord, total: number, page: { offset: number; limit: number }, data: unknown[]): Record<string, unknown> {
  return { reconciliation_id: run.reconciliation_id, status: run.status, total_count: total, offset: page.offset, limit: page.limit, data };
}

/** The finished instant run: its record, every match and every unmatched record with its reason. */
function instantView(run: ReconciliationRecord, results: RunResults, records: ExternalRecord[]): Record<string, unknown> {
  return {
    ...reconciliationView(run),
    matches: results.matches.map((match: ReconciliationMatch) => matchView(match)),
    unmatched: results.unmatched.map((entry) => ({
      external_transaction_id: entry.external_id,
      reason: entry.reason,
      record: externalRecordView(records[entry.position] as ExternalRecord, run.source),
    })),
  };
}

function uploadFailed(message: string, details: Record<string, unknown>): ApiError {
  return new ApiError('RECON_UPLOAD_FAILED', message, details);
}

interface ReadUpload {
  name: string;
  type: string;
  text: string;
  source: string;
}

/** Room for the multipart framing and the small fields beside a file of the largest size. */
const MULTIPART_FRAMING_BYTES_MAX = 128 * 1024;
const FIELDS_BYTES_MAX = 64 * 1024;

/**
 * Reads a multipart body into memory (nothing is written to disk): one `file` part of at most
 * `bytesMax` bytes, which must be UTF-8 text, and a few small fields. The bytes come through the body
 * reader's counted stream (json-body.ts countedBody): inflated if compressed, and counted against the
 * process's body bytes in flight until the route is done. A body that is not multipart (the JSON reader
 * took it) leaves `ctx.state.upload` unset.
 */
function multipartReader(bytesMax: number, inFlight: BodyBytesInFlight | undefined): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.is('multipart')) return next();
    const hold = new BodyHold(inFlight);
    try {
      await readMultipart(ctx, bytesMax, hold);
      return await next();
    } finally {
      hold.release();
    }
  };
}

async function readMultipart(ctx: Koa.Context, bytesMax: number, hold: BodyHold): Promise<void> {
  const chunks: Buffer[] = [];
  const reader = koaBody({
    multipart: true,
    json: false,
    text: false,
    urlencoded: false,
    formidable: {
      maxFiles: 1,
      maxFileSize: bytesMax,
      maxTotalFileSize: bytesMax,
      maxFields: 8,
      maxFieldsSize: FIELDS_BYTES_MAX,
      allowEmptyFiles: true,
      minFileSize: 0,
      fileWriteStreamHandler: () => new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(chunk);
          done();
        },
      }),
    },
  });
  // koa-body hands formidable `ctx.req`: here, the counted stream in its place, on a context otherwise ctx's.
  const body = countedBody(ctx.req, bytesMax + FIELDS_BYTES_MAX + MULTIPART_FRAMING_BYTES_MAX, hold);
  try {
    await reader(Object.create(ctx, { req: { value: body } }) as never, async () => undefined);
  } catch (error) {
    body.destroy();
    throw multipartError(error);
  }
  const files = (ctx.request as { files?: Record<string, unknown> }).files ?? {};
  const file = (Array.isArray(files.file) ? files.file[0] : files.file) as { originalFilename?: string | null; mimetype?: string | null } | undefined;
  if (!file) throw uploadFailed('the upload has no `file` field', { field: 'file' });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw uploadFailed('the file is not UTF-8 text', { field: 'file' });
  }
  const fields = (ctx.request.body ?? {}) as Record<string, unknown>;
  const source = Array.isArray(fields.source) ? fields.source[0] : fields.source;
  ctx.state.upload = { name: file.originalFilename ?? '', type: file.mimetype ?? '', text, source: typeof source === 'string' ? source : '' } satisfies ReadUpload;
}

function multipartError(error: unknown): ApiError {
  // The body reader's own refusals (too large, too many bytes in flight, an unknown encoding) as they are.
  if (error instanceof ApiError) return error;
  const code = typeof error === 'object' && error !== null ? (error as { httpCode?: unknown; code?: unknown }) : {};
  // formidable's codes: 1009 file too large, 1016 total too large, 1015 too many files.
  if (code.code === 1009 || code.code === 1016 || code.httpCode === 413) return new ApiError('GEN_PAYLOAD_TOO_LARGE', 'the uploaded file is too large');
  return uploadFailed(`the multipart body could not be read: ${(error as Error).message}`, { field: 'file' });
}
