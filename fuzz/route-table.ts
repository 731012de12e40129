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
import { createApiKeySchema, hookSchema, listApiKeysQuerySchema, listHooksQuerySchema } from '../http/access-schemas.js';
import { pageQuerySchema } from '../http/common-schemas.js';
import { identitySchema, metadataUpdateSchema } from '../http/identity-schemas.js';
import { createBalanceSchema, createLedgerSchema, updateLedgerSchema } from '../http/ledger-schemas.js';
import { filterSchema, SEARCH_PAGE_MAX, SEARCH_PER_PAGE_MAX } from '../http/query-schemas.js';
import {
  BULK_TRANSACTIONS_MAX,
  bulkCommitSchema,
  bulkShape,
  bulkVoidSchema,
  inflightActionSchema,
  refundSchema,
  transactionShape,
} from '../http/transaction-schemas.js';
import { atQuerySchema, historyQuerySchema } from '../http/routes/balance-history-routes.js';
import { balanceQuerySchema } from '../http/routes/balance-routes.js';
import type { PoolName } from './fuzz-json.js';
import { CURRENCIES } from './field-hints.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** How a path parameter is filled: from a pool of live ids (or an unknown id with this prefix), or a fixed list. */
export type ParamFill =
  | { pool: PoolName; unknownPrefix: string }
  | { values: readonly string[] };

export interface FuzzRoute {
  method: HttpMethod;
  /** The pattern as registered with the router, e.g. `/transactions/inflight/:id`. */
  path: string;
  params?: Readonly<Record<string, ParamFill>>;
  body?: z.ZodType;
  query?: z.ZodType;
  /** `declared` when the schema is this table's stand-in for one the route keeps to itself. */
  schemaSource?: 'exported' | 'declared';
  /** Relative share of the cases this route gets. */
  weight: number;
}

// --- Stand-ins for schemas the routes do not export -------------------------------------------------

/**
 * The route's own transaction shape (http/transaction-schemas.ts), arranged as the union of the forms the
 * route accepts (one of precise_amount and amount; source or sources; destination or destinations): the
 * shape alone leaves those choices to checks across fields, so nearly every body drawn from it would
 * fail them, and the code behind them would go untried.
 */
const transactionFields = transactionShape.shape;
const transactionOptions = transactionShape.omit({
  amount: true, precise_amount: true, precision: true, source: true, destination: true, sources: true, destinations: true,
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
const transactionBody = z.union(amountForms.flatMap((amount) => sideForms.map((sides) => transactionOptions.extend({ ...amount, ...sides }))));
const bulkBody = bulkShape.extend({ transactions: z.array(transactionBody).min(1).max(BULK_TRANSACTIONS_MAX) });

/** http/query-schemas.ts `searchSchema` (module-private; routes call validateSearch). */
const searchBody = z.object({
  q: z.string().max(1_000).optional(),
  filter_by: z.string().max(8_000).optional(),
  sort_by: z.string().max(512).optional(),
  page: z.number().int().min(1).max(SEARCH_PAGE_MAX).optional(),
  per_page: z.number().int().min(0).max(SEARCH_PER_PAGE_MAX).optional(),
});

// --- Path parameters --------------------------------------------------------------------------------

const ledgerId: ParamFill = { pool: 'ledger', unknownPrefix: 'ldg' };
const balanceId: ParamFill = { pool: 'balance', unknownPrefix: 'bln' };
const transactionId: ParamFill = { pool: 'transaction', unknownPrefix: 'txn' };
const holdId: ParamFill = { pool: 'hold', unknownPrefix: 'txn' };
const identityId: ParamFill = { pool: 'identity', unknownPrefix: 'idt' };
const hookId: ParamFill = { pool: 'hook', unknownPrefix: 'hook' };
const apiKeyId: ParamFill = { pool: 'apiKey', unknownPrefix: 'key' };
const anyRecordId: ParamFill = { pool: 'record', unknownPrefix: 'rule' };
const searchCollection: ParamFill = { values: ['transactions', 'balances', 'ledgers', 'identities', 'reconciliations', 'nope'] };

const declared = 'declared' as const;
const exported = 'exported' as const;

export const FUZZ_ROUTES: readonly FuzzRoute[] = [
  { method: 'GET', path: '/health', weight: 2 },
  { method: 'GET', path: '/metrics', weight: 2 },
  { method: 'GET', path: '/openapi.json', weight: 1 },
  { method: 'GET', path: '/docs', weight: 1 },
  { method: 'GET', path: '/docs/start.js', weight: 1 },
  { method: 'GET', path: '/docs/swagger-ui.css', weight: 1 },
  { method: 'GET', path: '/docs/swagger-ui-bundle.js', weight: 1 },

  { method: 'POST', path: '/ledgers', body: createLedgerSchema, schemaSource: exported, weight: 20 },
  { method: 'GET', path: '/ledgers', query: pageQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/ledgers/:id', params: { id: ledgerId }, weight: 5 },
  { method: 'PUT', path: '/ledgers/:id', params: { id: ledgerId }, body: updateLedgerSchema, schemaSource: exported, weight: 10 },

  { method: 'POST', path: '/balances', body: createBalanceSchema, schemaSource: exported, weight: 30 },
  { method: 'GET', path: '/balances', query: pageQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/balances/:id', params: { id: balanceId }, query: balanceQuerySchema, schemaSource: exported, weight: 10 },
  { method: 'GET', path: '/balances/:id/at', params: { id: balanceId }, query: atQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/balances/:id/history', params: { id: balanceId }, query: historyQuerySchema, schemaSource: exported, weight: 5 },
  {
    method: 'GET', path: '/balances/indicator/:indicator/currency/:currency',
    params: { indicator: { pool: 'indicator', unknownPrefix: '@none' }, currency: { values: [...CURRENCIES, 'usd', ''] } }, weight: 5,
  },

  { method: 'POST', path: '/transactions', body: transactionBody, schemaSource: exported, weight: 120 },
  { method: 'POST', path: '/transactions/bulk', body: bulkBody, schemaSource: exported, weight: 25 },
  { method: 'GET', path: '/transactions', query: pageQuerySchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/transactions/:id', params: { id: transactionId }, weight: 10 },
  { method: 'GET', path: '/transactions/reference/:reference', params: { reference: { pool: 'reference', unknownPrefix: 'ref' } }, weight: 5 },
  { method: 'PUT', path: '/transactions/inflight/:id', params: { id: holdId }, body: inflightActionSchema, schemaSource: exported, weight: 50 },
  { method: 'POST', path: '/transactions/inflight/bulk/commit', body: bulkCommitSchema, schemaSource: exported, weight: 15 },
  { method: 'POST', path: '/transactions/inflight/bulk/void', body: bulkVoidSchema, schemaSource: exported, weight: 15 },
  { method: 'POST', path: '/refund-transaction/:id', params: { id: transactionId }, body: refundSchema, schemaSource: exported, weight: 30 },

  { method: 'POST', path: '/identities', body: identitySchema, schemaSource: exported, weight: 15 },
  { method: 'GET', path: '/identities', query: pageQuerySchema, schemaSource: exported, weight: 3 },
  { method: 'GET', path: '/identities/:id', params: { id: identityId }, weight: 5 },
  { method: 'PUT', path: '/identities/:id', params: { id: identityId }, body: identitySchema, schemaSource: exported, weight: 10 },
  { method: 'DELETE', path: '/identities/:id', params: { id: identityId }, weight: 5 },

  { method: 'POST', path: '/:id/metadata', params: { id: anyRecordId }, body: metadataUpdateSchema, schemaSource: exported, weight: 30 },

  { method: 'POST', path: '/ledgers/filter', body: filterSchema, schemaSource: exported, weight: 5 },
  { method: 'POST', path: '/balances/filter', body: filterSchema, schemaSource: exported, weight: 5 },
  { method: 'POST', path: '/transactions/filter', body: filterSchema, schemaSource: exported, weight: 10 },
  { method: 'POST', path: '/identities/filter', body: filterSchema, schemaSource: exported, weight: 5 },
  { method: 'POST', path: '/search/:collection', params: { collection: searchCollection }, body: searchBody, schemaSource: declared, weight: 15 },
  { method: 'POST', path: '/search/reindex', weight: 1 },
  { method: 'GET', path: '/search/reindex', weight: 2 },

  { method: 'POST', path: '/hooks', body: hookSchema, schemaSource: exported, weight: 5 },
  { method: 'GET', path: '/hooks', query: listHooksQuerySchema, schemaSource: exported, weight: 3 },
  { method: 'GET', path: '/hooks/:id', params: { id: hookId }, weight: 3 },
  { method: 'PUT', path: '/hooks/:id', params: { id: hookId }, body: hookSchema, schemaSource: exported, weight: 5 },
  { method: 'DELETE', path: '/hooks/:id', params: { id: hookId }, weight: 5 },
  { method: 'POST', path: '/hooks/:id/rotate-secret', params: { id: hookId }, weight: 3 },

  { method: 'POST', path: '/api-keys', body: createApiKeySchema, schemaSource: exported, weight: 10 },
  { method: 'GET', path: '/api-keys', query: listApiKeysQuerySchema, schemaSource: exported, weight: 3 },
  { method: 'DELETE', path: '/api-keys/:id', params: { id: apiKeyId }, weight: 3 },

  { method: 'POST', path: '/admin/snapshots', weight: 1 },
  { method: 'GET', path: '/admin/snapshots', weight: 2 },
];

/** `METHOD /pattern` of a route, the form the router's layers and the access table use. */
export function routeKey(route: Pick<FuzzRoute, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** Routes whose generator schema is declared here rather than taken from the route's module. */
export const DECLARED_SCHEMA_ROUTES: readonly string[] = FUZZ_ROUTES.filter((route) => route.schemaSource === 'declared').map(routeKey);
