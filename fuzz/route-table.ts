// Every route the fuzzer drives: method, path pattern exactly as the router registers it, how to fill
// each path parameter (an id that exists, an unknown one with the right prefix, odd text), and the
// schemas bodies and query strings are generated from. test/fuzz.int.test.ts fails when the router has
// a route this table lacks, so a new route cannot go unfuzzed.
//
// Schemas are the routes' own where the route validates through an exported schema (transactions and
// bulks through their exported shapes, arranged as the forms the route accepts). Where it does not (the
// schema is private to its module), the table declares one here with the same fields and bounds, marked
// `declared`; those are listed in `DECLARED_SCHEMA_ROUTES`.

import { z } from 'zod';
import { createApiKeySchema, hookSchema, listApiKeysQuerySchema, listHooksQuerySchema } from '../http/access/access-schemas.js';
import { coercedPageQuerySchema, pageQuerySchema, strictPageQuerySchema } from '../http/schemas/common-schemas.js';
import { statementQuerySchema } from '../http/routes/statement-routes.js';
import { createIdentitySchema, identitySchema, metadataUpdateSchema } from '../http/schemas/identity-schemas.js';
import { closePeriodSchema, createBalanceSchema, createLedgerSchema, updateLedgerSchema } from '../http/schemas/ledger-schemas.js';
import { monitorSchema } from '../http/schemas/monitor-schemas.js';
import { filterSchema, multiSearchSchema, SEARCH_PAGE_MAX, SEARCH_PER_PAGE_MAX } from '../http/schemas/query-schemas.js';
import { fieldListSchema } from '../http/routes/identity-token-routes.js';
import { recoverQuerySchema } from '../http/routes/queue-recovery-routes.js';
import { deliveriesQuerySchema } from '../http/routes/hook-routes.js';
import { CONSOLE_FILES } from '../http/routes/console-routes.js';
import {
  BULK_TRANSACTIONS_MAX,
  bulkCommitSchema,
  bulkShape,
  bulkVoidSchema,
  includeBalancesQuery,
  inflightActionSchema,
  refundSchema,
  transactionShape,
} from '../http/schemas/transaction-schemas.js';
import { atQuerySchema, historyQuerySchema, snapshotQuerySchema } from '../http/routes/balance-history-routes.js';
import { balanceIdentitySchema, balanceQuerySchema } from '../http/routes/balance-routes.js';
import { eventsQuerySchema } from '../http/routes/event-routes.js';
import type fc from 'fast-check';
import type { FuzzJson, PoolName } from './fuzz-json.js';
import { CURRENCIES, MONITOR_HINTS, TRANSACTION_HINTS } from './field-hints.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** How a path parameter is filled: from a pool of live ids (or an unknown id with this prefix), or a fixed list. */
export type ParamFill =
  | { pool: PoolName; unknownPrefix: string }
  | { values: readonly string[] };

/**
 * How a route is reached when it is not the server's own (the cloud's proxy in front of a core, or a
 * route that needs credentials): a prefix on the path, a query parameter every request carries, and
 * headers sent unless the case sends its own of that name.
 */
export interface RouteVia {
  prefix: string;
  query?: string;
  headers?: Readonly<Record<string, string>>;
}

export interface FuzzRoute {
  method: HttpMethod;
  /** The pattern as registered with the router, e.g. `/transactions/inflight/:id`. */
  path: string;
  params?: Readonly<Record<string, ParamFill>>;
  body?: z.ZodType;
  query?: z.ZodType;
  /** `declared` when the schema is this table's stand-in for one the route keeps to itself. */
  schemaSource?: 'exported' | 'declared';
  /** Field hints of this route's own, over the shared ones (field-hints.ts). */
  hints?: Readonly<Record<string, fc.Arbitrary<FuzzJson>>>;
  /** Relative share of the cases this route gets. */
  weight: number;
  /** How the route is reached (the table's routes are a core's own when absent). */
  via?: RouteVia;
  /** The route answers with HTML pages and redirects (a sign-in page), not JSON. */
  page?: boolean;
}

// --- Stand-ins for schemas the routes do not export -------------------------------------------------

/**
 * The route's own transaction shape (http/schemas/transaction-schemas.ts), arranged as the union of the forms the
 * route accepts (one of precise_amount and amount; source or sources; destination or destinations): the
 * shape alone leaves those choices to checks across fields, so nearly every body drawn from it would
 * fail them, and the code behind them would go untried.
 */
const transactionFields = transactionShape.shape;
const transactionOptions = transactionShape.omit({
  amount: true, precise_amount: true, precision: true, source: true, destination: true, sources: true, destinations: true,
  rate: true, destination_currency: true, destination_precision: true, rounding: true,
});
const amountForms = [
  { precise_amount: transactionFields.precise_amount.unwrap(), precision: transactionFields.precision },
  { amount: transactionFields.amount.unwrap(), precision: transactionFields.precision.unwrap() },
];
const sideForms = [
  { source: transactionFields.source.unwrap(), destination: transactionFields.destination.unwrap() },
  { sources: transactionFields.sources.unwrap(), destination: transactionFields.destination.unwrap() },
  { source: transactionFields.source.unwrap(), destinations: transactionFields.destinations.unwrap() },
  { sources: transactionFields.sources.unwrap(), destinations: transactionFields.destinations.unwrap() },
];
// An exchange (engine/exchange.ts) names its rate and destination currency together, with one source and one destination.
const exchangeForm = {
  source: transactionFields.source.unwrap(), destination: transactionFields.destination.unwrap(),
  rate: transactionFields.rate.unwrap(), destination_currency: transactionFields.destination_currency.unwrap(),
  destination_precision: transactionFields.destination_precision, rounding: transactionFields.rounding,
};
const transactionBody = z.union([
  ...amountForms.flatMap((amount) => sideForms.map((sides) => transactionOptions.extend({ ...amount, ...sides }))),
  ...amountForms.map((amount) => transactionOptions.extend({ ...amount, ...exchangeForm })),
]);
const bulkBody = bulkShape.extend({ transactions: z.array(transactionBody).min(1).max(BULK_TRANSACTIONS_MAX) });

/** http/schemas/query-schemas.ts `searchSchema` (module-private; routes call validateSearch). */
const searchBody = z.object({
  q: z.string().max(1_000).optional(),
  filter_by: z.string().max(8_000).optional(),
  sort_by: z.string().max(512).optional(),
  page: z.number().int().min(1).max(SEARCH_PAGE_MAX).optional(),
  per_page: z.number().int().min(0).max(SEARCH_PER_PAGE_MAX).optional(),
  query_by: z.string().max(2_000).optional(),
  prefix: z.boolean().optional(),
  facet_by: z.string().max(2_000).optional(),
  max_facet_values: z.number().int().min(1).max(SEARCH_PER_PAGE_MAX).optional(),
  group_by: z.string().max(2_000).optional(),
  group_limit: z.number().int().min(1).max(99).optional(),
  include_fields: z.string().max(2_000).optional(),
  exclude_fields: z.string().max(2_000).optional(),
  highlight_fields: z.string().max(2_000).optional(),
});

/** http/schemas/reconciliation-schemas.ts `ruleShape` (module-private; the route converts with ruleCommandFrom). */
const ruleBody = z.object({
  name: z.string().max(100),
  description: z.string().max(200).optional(),
  criteria: z.array(z.object({
    field: z.enum(['amount', 'currency', 'reference', 'description', 'date', 'nope']),
    operator: z.enum(['equals', 'contains', 'greater_than', 'less_than', 'before', 'after', 'nope']),
    allowable_drift: z.union([z.number(), z.string().max(64)]).optional(),
  })).max(16),
});
const runFields = {
  strategy: z.enum(['one_to_one', 'one_to_many', 'many_to_one', 'nope']),
  grouping_criteria: z.enum(['batch_id', 'reference', 'parent_transaction', 'date', 'nope']).optional(),
  matching_rule_ids: z.array(z.string().max(64)).max(16).optional(),
  dry_run: z.boolean().optional(),
};
/** http/schemas/reconciliation-schemas.ts `startShape` (module-private). */
const startBody = z.object({ upload_id: z.string().max(64), ...runFields });
/** http/schemas/reconciliation-schemas.ts `instantShape` with external records as http/schemas/external-records-input.ts reads them. */
const instantBody = z.object({
  external_transactions: z.array(z.object({
    id: z.string().max(64), amount: z.union([z.number(), z.string().max(40)]), currency: z.enum([...CURRENCIES, 'usd']),
    reference: z.string().max(64), description: z.string().max(100), date: z.string().max(40), source: z.string().max(40).optional(),
  })).max(50).optional(),
  ...runFields,
});
/** http/schemas/reconciliation-schemas.ts `resultsPageSchema` (module-private). */
const resultsQuery = z.object({ limit: z.string().max(8).optional(), offset: z.string().max(8).optional() });

// --- Path parameters --------------------------------------------------------------------------------

const ledgerId: ParamFill = { pool: 'ledger', unknownPrefix: 'ldg' };
const balanceId: ParamFill = { pool: 'balance', unknownPrefix: 'bln' };
const transactionId: ParamFill = { pool: 'transaction', unknownPrefix: 'txn' };
const holdId: ParamFill = { pool: 'hold', unknownPrefix: 'txn' };
const identityId: ParamFill = { pool: 'identity', unknownPrefix: 'idt' };
const hookId: ParamFill = { pool: 'hook', unknownPrefix: 'hook' };
const apiKeyId: ParamFill = { pool: 'apiKey', unknownPrefix: 'key' };
const ruleId: ParamFill = { pool: 'record', unknownPrefix: 'rule' };
const reconciliationId: ParamFill = { pool: 'record', unknownPrefix: 'recon' };
const anyRecordId: ParamFill = { pool: 'record', unknownPrefix: 'rule' };
const monitorId: ParamFill = { values: ['mon_0190d5a0-0000-7000-8000-000000000000', 'mon_', 'x'] };
const identityField: ParamFill = { values: ['firstName', 'first_name', 'EmailAddress', 'category', 'nope', ''] };
const searchCollection: ParamFill = { values: ['transactions', 'balances', 'ledgers', 'identities', 'reconciliations', 'nope'] };

const inspectQuery = z.object({
  at_seq: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  wait_ms: z.coerce.number().int().min(0).max(20).optional(),
  state_hash: z.enum(['true', 'false']).optional(),
  lag_window_ms: z.coerce.number().int().min(1).max(3_600_000).optional(),
  group: z.enum(['true', 'false']).optional(),
});

const declared = 'declared' as const;
const exported = 'exported' as const;

export const FUZZ_ROUTES: readonly FuzzRoute[] = [
  { method: 'GET', path: '/', weight: 1 },
  { method: 'GET', path: '/health', weight: 2 },
  { method: 'GET', path: '/metrics', weight: 2 },
  { method: 'GET', path: '/openapi.json', weight: 1 },
  { method: 'GET', path: '/docs', weight: 1 },
  { method: 'GET', path: '/docs/start.js', weight: 1 },
  { method: 'GET', path: '/docs/swagger-ui.css', weight: 1 },
  { method: 'GET', path: '/docs/swagger-ui-bundle.js', weight: 1 },
  { method: 'GET', path: '/console', weight: 1 },
  { method: 'GET', path: '/console/:file', params: { file: { values: [...Object.keys(CONSOLE_FILES), 'index.html', 'nope.js', '..', '%2e%2e', 'main.js%00'] } }, weight: 2 },

  { method: 'POST', path: '/ledgers', body: createLedgerSchema, schemaSource: exported, weight: 20 },
  { method: 'GET', path: '/ledgers', query: strictPageQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/ledgers/:id', params: { id: ledgerId }, weight: 5 },
  { method: 'PUT', path: '/ledgers/:id', params: { id: ledgerId }, body: updateLedgerSchema, schemaSource: exported, weight: 10 },
  { method: 'POST', path: '/ledgers/:id/periods', params: { id: ledgerId }, body: closePeriodSchema, schemaSource: exported, weight: 3 },
  { method: 'GET', path: '/ledgers/:id/periods', params: { id: ledgerId }, weight: 2 },

  { method: 'POST', path: '/balances', body: createBalanceSchema, schemaSource: exported, weight: 30 },
  { method: 'GET', path: '/balances', query: strictPageQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/balances/:id', params: { id: balanceId }, query: balanceQuerySchema, schemaSource: exported, weight: 10 },
  { method: 'GET', path: '/balances/:id/at', params: { id: balanceId }, query: atQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/balances/:id/history', params: { id: balanceId }, query: historyQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'PUT', path: '/balances/:id/identity', params: { id: balanceId }, body: balanceIdentitySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/balances/:id/lineage', params: { id: balanceId }, weight: 3 },
  { method: 'GET', path: '/balances/:id/statement', params: { id: balanceId }, query: statementQuerySchema, schemaSource: exported, weight: 3 },
  { method: 'POST', path: '/balances-snapshots', query: snapshotQuerySchema, schemaSource: exported, weight: 1 },
  {
    method: 'GET', path: '/balances/indicator/:indicator/currency/:currency',
    params: { indicator: { pool: 'indicator', unknownPrefix: '@none' }, currency: { values: [...CURRENCIES, 'usd', ''] } }, weight: 5,
  },

  { method: 'POST', path: '/balance-monitors', body: monitorSchema, schemaSource: exported, hints: MONITOR_HINTS, weight: 10 },
  { method: 'GET', path: '/balance-monitors', weight: 2 },
  { method: 'GET', path: '/balance-monitors/balances/:balance_id', params: { balance_id: balanceId }, weight: 2 },
  { method: 'GET', path: '/balance-monitors/:id', params: { id: monitorId }, weight: 2 },
  { method: 'PUT', path: '/balance-monitors/:id', params: { id: monitorId }, body: monitorSchema, schemaSource: exported, hints: MONITOR_HINTS, weight: 3 },
  { method: 'DELETE', path: '/balance-monitors/:id', params: { id: monitorId }, weight: 2 },

  { method: 'POST', path: '/transactions', body: transactionBody, query: includeBalancesQuery, schemaSource: exported, weight: 120, hints: TRANSACTION_HINTS },
  { method: 'POST', path: '/transactions/bulk', body: bulkBody, query: includeBalancesQuery, schemaSource: exported, weight: 25, hints: TRANSACTION_HINTS },
  { method: 'GET', path: '/transactions', query: coercedPageQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/transactions/:id', params: { id: transactionId }, weight: 10 },
  { method: 'GET', path: '/transactions/:id/lineage', params: { id: transactionId }, weight: 3 },
  { method: 'GET', path: '/transactions/:id/log-position', params: { id: transactionId }, weight: 3 },
  { method: 'GET', path: '/transactions/reference/:reference', params: { reference: { pool: 'reference', unknownPrefix: 'ref' } }, weight: 5 },
  { method: 'PUT', path: '/transactions/inflight/:id', params: { id: holdId }, body: inflightActionSchema, query: includeBalancesQuery, schemaSource: exported, weight: 50, hints: TRANSACTION_HINTS },
  { method: 'POST', path: '/transactions/inflight/bulk/commit', body: bulkCommitSchema, query: includeBalancesQuery, schemaSource: exported, weight: 15 },
  { method: 'POST', path: '/transactions/inflight/bulk/void', body: bulkVoidSchema, query: includeBalancesQuery, schemaSource: exported, weight: 15 },
  { method: 'POST', path: '/transactions/recover', query: recoverQuerySchema, schemaSource: exported, weight: 2 },
  { method: 'POST', path: '/refund-transaction/:id', params: { id: transactionId }, body: refundSchema, schemaSource: exported, weight: 30 },

  { method: 'POST', path: '/identities', body: createIdentitySchema, schemaSource: exported, weight: 15 },
  { method: 'GET', path: '/identities', query: pageQuerySchema, schemaSource: exported, weight: 3 },
  { method: 'GET', path: '/identities/:id', params: { id: identityId }, weight: 5 },
  { method: 'PUT', path: '/identities/:id', params: { id: identityId }, body: identitySchema, schemaSource: exported, weight: 10 },
  { method: 'DELETE', path: '/identities/:id', params: { id: identityId }, weight: 5 },
  { method: 'GET', path: '/identities/:id/tokenized-fields', params: { id: identityId }, weight: 2 },
  { method: 'POST', path: '/identities/:id/tokenize/:field', params: { id: identityId, field: identityField }, weight: 3 },
  { method: 'POST', path: '/identities/:id/tokenize', params: { id: identityId }, body: fieldListSchema, schemaSource: exported, weight: 3 },
  { method: 'GET', path: '/identities/:id/detokenize/:field', params: { id: identityId, field: identityField }, weight: 3 },
  { method: 'POST', path: '/identities/:id/detokenize', params: { id: identityId }, body: fieldListSchema, schemaSource: exported, weight: 3 },

  { method: 'POST', path: '/:id/metadata', params: { id: anyRecordId }, body: metadataUpdateSchema, schemaSource: exported, weight: 30 },

  { method: 'POST', path: '/ledgers/filter', body: filterSchema, schemaSource: exported, weight: 5 },
  { method: 'POST', path: '/balances/filter', body: filterSchema, schemaSource: exported, weight: 5 },
  { method: 'POST', path: '/transactions/filter', body: filterSchema, schemaSource: exported, weight: 10 },
  { method: 'POST', path: '/identities/filter', body: filterSchema, schemaSource: exported, weight: 5 },
  { method: 'POST', path: '/search/:collection', params: { collection: searchCollection }, body: searchBody, schemaSource: declared, weight: 15 },
  { method: 'POST', path: '/multi-search', body: multiSearchSchema, schemaSource: exported, weight: 5 },
  { method: 'POST', path: '/search/reindex', weight: 1 },
  { method: 'GET', path: '/search/reindex', weight: 2 },

  { method: 'POST', path: '/hooks', body: hookSchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/hooks', query: listHooksQuerySchema, schemaSource: exported, weight: 3 },
  { method: 'GET', path: '/hooks/:id', params: { id: hookId }, weight: 3 },
  { method: 'PUT', path: '/hooks/:id', params: { id: hookId }, body: hookSchema, schemaSource: exported, weight: 5 },
  { method: 'DELETE', path: '/hooks/:id', params: { id: hookId }, weight: 5 },
  { method: 'POST', path: '/hooks/:id/rotate-secret', params: { id: hookId }, weight: 3 },
  { method: 'GET', path: '/hooks/:id/deliveries', params: { id: hookId }, query: deliveriesQuerySchema, schemaSource: exported, weight: 2 },

  // Uploads are multipart; the fuzzer's JSON bodies exercise the refusal (test/reconciliation-api.int.test.ts covers files).
  { method: 'POST', path: '/reconciliation/upload', weight: 1 },
  { method: 'GET', path: '/reconciliation/uploads', query: pageQuerySchema, schemaSource: exported, weight: 2 },
  { method: 'POST', path: '/reconciliation/matching-rules', body: ruleBody, schemaSource: declared, weight: 8 },
  { method: 'GET', path: '/reconciliation/matching-rules', weight: 2 },
  { method: 'GET', path: '/reconciliation/matching-rules/:id', params: { id: ruleId }, weight: 2 },
  { method: 'PUT', path: '/reconciliation/matching-rules/:id', params: { id: ruleId }, body: ruleBody, schemaSource: declared, weight: 4 },
  { method: 'DELETE', path: '/reconciliation/matching-rules/:id', params: { id: ruleId }, weight: 2 },
  { method: 'POST', path: '/reconciliation/start', body: startBody, schemaSource: declared, weight: 4 },
  { method: 'POST', path: '/reconciliation/start-instant', body: instantBody, schemaSource: declared, weight: 8 },
  { method: 'GET', path: '/reconciliation/:id', params: { id: reconciliationId }, weight: 2 },
  { method: 'GET', path: '/reconciliation/:id/matches', params: { id: reconciliationId }, query: resultsQuery, schemaSource: declared, weight: 2 },
  { method: 'GET', path: '/reconciliation/:id/unmatched', params: { id: reconciliationId }, query: resultsQuery, schemaSource: declared, weight: 2 },

  { method: 'POST', path: '/api-keys', body: createApiKeySchema, schemaSource: exported, weight: 10 },
  { method: 'GET', path: '/api-keys', query: listApiKeysQuerySchema, schemaSource: exported, weight: 3 },
  { method: 'GET', path: '/api-keys/current', weight: 2 },
  { method: 'DELETE', path: '/api-keys/:id', params: { id: apiKeyId }, weight: 3 },

  { method: 'POST', path: '/backup', weight: 1 },
  { method: 'GET', path: '/backup', weight: 1 },
  { method: 'POST', path: '/admin/snapshots', weight: 1 },
  { method: 'GET', path: '/admin/snapshots', weight: 2 },
  { method: 'GET', path: '/events', query: eventsQuerySchema, schemaSource: exported, weight: 3 },
  // The route's own schema lets a request wait up to 30 s for a seq; the fuzzer keeps its waits short.
  { method: 'GET', path: '/admin/replication', query: inspectQuery, schemaSource: declared, weight: 2 },
];

/** `METHOD /pattern` of a route, the form the router's layers and the access table use. */
export function routeKey(route: Pick<FuzzRoute, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** Routes whose generator schema is declared here rather than taken from the route's module. */
export const DECLARED_SCHEMA_ROUTES: readonly string[] = FUZZ_ROUTES.filter((route) => route.schemaSource === 'declared').map(routeKey);
