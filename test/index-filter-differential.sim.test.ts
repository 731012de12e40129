// Differential test of the filter API: thousands of seeded random filters (several predicates, and/or,
// every operator, metadata paths, sorts, paging, counts) run through the real server and its SQLite
// index, and through the plain in-memory model over the same records. Pages must be identical, record
// for record and byte for byte. FOLIO_SEED=<n> replays a run; the seed is printed on every failure.

import t from 'tap';
import { identityView } from '../http/views/identity-view.js';
import { toJsonText } from '../wire/json-text.js';
import { transactionJson } from '../wire/transaction-json.js';
import { balanceView, ledgerView } from '../wire/views.js';
import { evaluateFilter, MODEL_FIELDS, MODEL_SORTABLE, type ModelCollection, type ModelCondition, type ModelRequest } from './helpers/filter-model.js';
import { buildDataset, datasetOf, NAMES, seededRandom, TIERS, WORDS, type Dataset } from './helpers/query-dataset.js';
import { startScopedServer } from './helpers/scoped-server.js';
import type { TestServer } from './helpers/test-server.js';

const SEED = Number(process.env.FOLIO_SEED ?? Date.now() % 1_000_000);
const FILTERS = Number(process.env.FOLIO_FILTERS ?? 2_500);
const COLLECTIONS: ModelCollection[] = ['ledgers', 'balances', 'transactions', 'identities'];
const VIEWS: Record<ModelCollection, (record: never) => unknown> = {
  ledgers: ledgerView, balances: balanceView, transactions: transactionJson, identities: identityView,
};
const OPERATORS_BY_KIND: Record<string, string[]> = {
  text: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'like', 'ilike', 'isnull', 'isnotnull'],
  meta: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'like', 'ilike', 'isnull', 'isnotnull'],
  amount: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'isnull', 'isnotnull'],
  time: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'isnull', 'isnotnull'],
  integer: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'isnull', 'isnotnull'],
  boolean: ['eq', 'ne', 'in', 'isnull', 'isnotnull'],
};
const META_PATHS = ['meta_data.tier', 'meta_data.score', 'meta_data.flag', 'meta_data.nested.level', 'meta_data.missing'];

async function quiesce(server: TestServer): Promise<void> {
  const { runtime } = server;
  for (let attempt = 0; attempt < 200 && runtime.engine.view.queuedCount() > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  await runtime.durable(runtime.log.appendedSeq);
}

/** A value a condition on this field might use: usually one the records hold, sometimes a near miss. */
function sampleValue(next: () => number, dataset: Dataset, collection: ModelCollection, field: string, kind: string): unknown {
  const records = dataset[collection] as any[];
  const record = records[Math.floor(next() * records.length)];
  if (field.startsWith('meta_data.')) {
    const key = field.slice('meta_data.'.length);
    if (key === 'tier') return next() < 0.8 ? TIERS[Math.floor(next() * TIERS.length)] : 'GOLD';
    if (key === 'flag') return next() < 0.5;
    return Math.floor(next() * 20) - 5;
  }
  const [, get] = (MODEL_FIELDS[collection] as Record<string, [string, (r: any) => unknown[]]>)[field] as [string, (r: any) => unknown[]];
  const value = record ? get(record)[0] : undefined;
  switch (kind) {
    case 'amount': {
      const base = typeof value === 'bigint' ? value : 0n;
      const shifted = base + BigInt(Math.floor(next() * 3) - 1);
      const safe = shifted <= BigInt(Number.MAX_SAFE_INTEGER) && shifted >= -BigInt(Number.MAX_SAFE_INTEGER);
      return safe && next() < 0.5 ? Number(shifted) : shifted.toString();
    }
    case 'time': {
      const ms = typeof value === 'number' ? value : 0;
      return ms === 0 && next() < 0.5 ? '0001-01-01T00:00:00Z' : new Date(ms + Math.floor(next() * 3) - 1).toISOString();
    }
    case 'integer':
      return (typeof value === 'number' ? value : 0) + Math.floor(next() * 3) - 1;
    case 'boolean':
      return next() < 0.5;
    default:
      if (next() < 0.15) return (NAMES[Math.floor(next() * NAMES.length)] as string);
      return typeof value === 'string' ? value : '';
  }
}

function likePattern(next: () => number, sample: unknown): string {
  const textValue = typeof sample === 'string' && sample !== '' ? sample : (WORDS[Math.floor(next() * WORDS.length)] as string);
  const chars = [...textValue];
  const start = Math.floor(next() * chars.length);
  const piece = chars.slice(start, start + 1 + Math.floor(next() * 4)).join('').replace(/[%_\\]/g, (char) => `\\${char}`);
  const variants = [`%${piece}%`, `${piece}%`, `%${piece}`, `_${piece}%`, piece.toUpperCase() + '%', `%${piece.toLowerCase()}%`];
  return variants[Math.floor(next() * variants.length)] as string;
}

function randomCondition(next: () => number, dataset: Dataset, collection: ModelCollection): ModelCondition {
  const fields = Object.keys(MODEL_FIELDS[collection]);
  const useMeta = next() < 0.25;
  const field = useMeta ? (META_PATHS[Math.floor(next() * META_PATHS.length)] as string) : (fields[Math.floor(next() * fields.length)] as string);
  const kind = useMeta ? 'meta' : (MODEL_FIELDS[collection][field] as [string, unknown])[0];
  const operators = OPERATORS_BY_KIND[kind] as string[];
  const operator = operators[Math.floor(next() * operators.length)] as string;
  const sample = (): unknown => sampleValue(next, dataset, collection, field, kind);
  switch (operator) {
    case 'isnull':
    case 'isnotnull':
      return { field, operator };
    case 'in':
      return { field, operator, values: Array.from({ length: 1 + Math.floor(next() * 4) }, sample) };
    case 'between': {
      const [a, b] = [sample(), sample()];
      return { field, operator, values: next() < 0.8 ? orderPair(kind, a, b) : [a, b] };
    }
    case 'like':
    case 'ilike':
      return { field, operator, value: likePattern(next, sample()) };
    default:
      return { field, operator: next() < 0.1 ? operator.toUpperCase() : operator, value: sample() };
  }
}

function orderPair(kind: string, a: unknown, b: unknown): [unknown, unknown] {
  const key = (value: unknown): number | bigint | string =>
    kind === 'amount' ? BigInt(value as string) : kind === 'time' ? (String(value).startsWith('0001') ? 0 : Date.parse(value as string)) : (value as number | string);
  return key(a) <= key(b) ? [a, b] : [b, a];
}

function randomRequest(next: () => number, dataset: Dataset, collection: ModelCollection): ModelRequest & { include_count: boolean } {
  const conditions = Array.from({ length: Math.floor(next() * 4) }, () => randomCondition(next, dataset, collection));
  const sortable = MODEL_SORTABLE[collection];
  return {
    filters: conditions,
    logical_operator: next() < 0.5 ? 'and' : next() < 0.5 ? 'or' : 'OR',
    sort_by: next() < 0.2 ? undefined : sortable[Math.floor(next() * sortable.length)],
    sort_order: next() < 0.2 ? undefined : next() < 0.5 ? 'asc' : 'desc',
    limit: next() < 0.3 ? 100 : 1 + Math.floor(next() * 25),
    offset: next() < 0.6 ? 0 : Math.floor(next() * 30),
    include_count: next() < 0.5,
  };
}

t.test(`random filters agree with the in-memory model (seed ${SEED})`, async (t) => {
  const server = await startScopedServer(t);
  await buildDataset(server, SEED, 220);
  await quiesce(server);
  const dataset = datasetOf(server);
  t.ok(dataset.transactions.length > 100, `dataset has ${dataset.transactions.length} transactions`);

  const next = seededRandom(SEED * 7 + 1);
  let mismatches = 0;
  let nonEmpty = 0;
  const reported: string[] = [];
  for (let index = 0; index < FILTERS; index += 1) {
    const collection = COLLECTIONS[Math.floor(next() * COLLECTIONS.length)] as ModelCollection;
    const request = randomRequest(next, dataset, collection);
    const response = await server.request('POST', `/${collection}/filter`, request);
    const expected = evaluateFilter(collection, dataset[collection] as any[], request);
    const expectedText = toJsonText(expected.page.map((record) => VIEWS[collection](record as never)));
    const actualText = response.status === 200 ? toJsonText(response.body.data) : `status ${response.status}: ${response.text}`;
    const countOk = !request.include_count || (response.status === 200 && response.body.total_count === expected.total);
    if (expected.page.length > 0) nonEmpty += 1;
    if (actualText !== expectedText || !countOk) {
      mismatches += 1;
      if (reported.length < 3) {
        reported.push(`seed ${SEED}, filter #${index} on ${collection}: ${JSON.stringify(request, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}\n`
          + `  expected ${expected.total} total, page ${expectedText.slice(0, 400)}\n  actual   ${response.body?.total_count} total, ${actualText.slice(0, 400)}`);
      }
    }
  }
  for (const report of reported) t.comment(report);
  t.equal(mismatches, 0, `zero mismatches over ${FILTERS} filters (seed ${SEED})`);
  t.ok(nonEmpty > FILTERS / 5, `enough filters matched something (${nonEmpty} of ${FILTERS})`);
});
