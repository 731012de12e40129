// One fuzz case, as fast-check generates it: either a request built from a route's schemas (body and
// query generated, then zero or more mutations applied) or a raw case (raw-requests.ts). Cases are plain
// data with pool references and relative times unresolved, so the same seed gives the same cases; they
// become HTTP requests only when sent (`caseRequest`), against the pools and clock of that moment.
//
// `caseAt(seed, index)` is the case sequence of a run: fast-check samples it in chunks, each chunk from
// a seed derived from the run's seed, so any case can be regenerated from (seed, index) alone.

import fc from 'fast-check';
import { applyMutations, mutationArbitrary, type Mutation } from './body-mutation.js';
import { describeFuzzJson, fuzzJsonText, type FuzzJson, type SendContext } from './fuzz-json.js';
import { applyVia, type FuzzRequest } from './fuzz-request.js';
import { rawCaseArbitrary, rawRequest, targetArbitrary, type RawCase, type Target } from './raw-requests.js';
import { bodyArbitrary, filledPath, paramNames, paramText, queryArbitrary, queryString } from './route-requests.js';
import { routeKey, type FuzzRoute, type RouteVia } from './route-table.js';

export type FuzzCase =
  | { kind: 'schema'; target: Target; body: FuzzJson | undefined; query: FuzzJson | undefined; mutations: readonly Mutation[]; queryMutations: readonly Mutation[]; chunked: boolean }
  | { kind: 'raw'; raw: RawCase };

/** A case made concrete: the request, and what the answer oracles and learning need to know about it. */
export interface SentCase {
  request: FuzzRequest;
  /** `METHOD /pattern` of the route aimed at (raw odd paths aim at none). */
  routeKey: string;
  /** The path parameters as sent, before encoding. */
  params: string[];
  /** The body as a tree, when the case built one and sent it as JSON. */
  body: FuzzJson | undefined;
  /** The body as sent, abbreviated for reports. */
  bodyDescription: string;
  /** The route answers with HTML pages and redirects (route-table.ts). */
  page?: boolean;
}

/** Share of schema cases sent exactly as generated (the rest are mutated): valid work keeps the ledger busy. */
const UNMUTATED_WEIGHT = 2;
const MUTATED_WEIGHT = 3;
const SCHEMA_CASE_WEIGHT = 17;
const RAW_CASE_WEIGHT = 3;
/** Cases sampled per fast-check call. */
const CHUNK_CASES = 64;

const mutations = fc.oneof(
  { weight: UNMUTATED_WEIGHT, arbitrary: fc.constant<Mutation[]>([]) },
  { weight: MUTATED_WEIGHT, arbitrary: fc.array(mutationArbitrary, { minLength: 1, maxLength: 3 }) },
);

const queryMutations = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Mutation[]>([]) },
  { weight: 1, arbitrary: fc.array(mutationArbitrary, { minLength: 1, maxLength: 2 }) },
);

export function caseArbitrary(routes: readonly FuzzRoute[]): fc.Arbitrary<FuzzCase> {
  const schemaCase = targetArbitrary(routes).chain((target) => {
    const route = routes[target.route]!;
    return fc.record({
      kind: fc.constant('schema' as const),
      target: fc.constant(target),
      body: bodyArbitrary(route) ?? fc.constant(undefined),
      query: queryArbitrary(route) ?? fc.constant(undefined),
      mutations: route.body ? mutations : fc.constant<Mutation[]>([]),
      queryMutations: route.query ? queryMutations : fc.constant<Mutation[]>([]),
      chunked: fc.oneof({ weight: 19, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    });
  });
  return fc.oneof(
    { weight: SCHEMA_CASE_WEIGHT, arbitrary: schemaCase },
    { weight: RAW_CASE_WEIGHT, arbitrary: rawCaseArbitrary(routes).map((raw): FuzzCase => ({ kind: 'raw', raw })) },
  );
}

/** The case as it is sent; odd paths (which aim at no route) go by `oddPathVia` when given. */
export function caseRequest(fuzzCase: FuzzCase, routes: readonly FuzzRoute[], context: SendContext, oddPathVia?: RouteVia): SentCase {
  if (fuzzCase.kind === 'raw') return rawSentCase(fuzzCase.raw, routes, context, oddPathVia);
  const route = routes[fuzzCase.target.route]!;
  const query = fuzzCase.query === undefined ? undefined : applyMutations(fuzzCase.query, fuzzCase.queryMutations);
  const body = fuzzCase.body === undefined ? undefined : applyMutations(fuzzCase.body, fuzzCase.mutations);
  const request: FuzzRequest = {
    method: route.method,
    path: filledPath(route, fuzzCase.target.params, context) + queryString(query, context),
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    chunked: fuzzCase.chunked,
  };
  if (body !== undefined) request.body = fuzzJsonText(body, context);
  return {
    request: applyVia(request, route.via),
    routeKey: routeKey(route),
    params: paramValues(route, fuzzCase.target, context),
    body,
    bodyDescription: body === undefined ? '' : describeFuzzJson(body, context),
    page: route.page,
  };
}

function rawSentCase(raw: RawCase, routes: readonly FuzzRoute[], context: SendContext, oddPathVia: RouteVia | undefined): SentCase {
  const route = raw.kind === 'odd-path' ? undefined : routes[raw.target.route];
  const request = { ...applyVia(rawRequest(raw, routes, context), route ? route.via : oddPathVia), ownConnection: true };
  return {
    page: route?.page,
    request,
    routeKey: route ? routeKey(route) : `${raw.kind} ${raw.kind === 'odd-path' ? raw.method : ''}`.trim(),
    params: route && raw.kind !== 'odd-path' ? paramValues(route, raw.target, context) : [],
    // Raw bodies are never read back as the tree they came from: a write they cause is learned, not checked.
    body: undefined,
    bodyDescription: describeRawBody(request.body),
  };
}

function paramValues(route: FuzzRoute, target: Target, context: SendContext): string[] {
  return paramNames(route).map((name, index) => paramText(route.params![name]!, target.params[index]!, context));
}

function describeRawBody(body: string | Buffer | undefined): string {
  if (body === undefined) return '';
  const text = typeof body === 'string' ? body : body.toString('latin1');
  return text.length > 300 ? `${JSON.stringify(text.slice(0, 300))}…(${text.length} chars)` : JSON.stringify(text);
}

/** Derives the seed of one chunk from the run's seed (splitmix32 of both), so chunks differ and replay. */
function chunkSeed(seed: number, chunk: number): number {
  let mixed = (seed ^ Math.imul(chunk + 1, 0x9e3779b9)) >>> 0;
  mixed = Math.imul(mixed ^ (mixed >>> 16), 0x85ebca6b) >>> 0;
  mixed = Math.imul(mixed ^ (mixed >>> 13), 0xc2b2ae35) >>> 0;
  return (mixed ^ (mixed >>> 16)) >>> 0;
}

/** The run's case sequence: case `index` of the run with `seed`, the same every time. */
export class CaseSequence {
  private readonly arbitrary: fc.Arbitrary<FuzzCase>;
  private chunk = -1;
  private cases: FuzzCase[] = [];

  constructor(readonly seed: number, routes: readonly FuzzRoute[]) {
    this.arbitrary = caseArbitrary(routes);
  }

  caseAt(index: number): FuzzCase {
    const chunk = Math.floor(index / CHUNK_CASES);
    if (chunk !== this.chunk) {
      this.cases = fc.sample(this.arbitrary, { seed: chunkSeed(this.seed, chunk), numRuns: CHUNK_CASES });
      this.chunk = chunk;
    }
    return this.cases[index % CHUNK_CASES]!;
  }
}
