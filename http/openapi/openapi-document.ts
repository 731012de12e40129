// The OpenAPI 3.1 document, generated from a router: every route layer the router has becomes an
// operation, described by the declaration made next to the route (route-docs.ts): path parameters from
// the pattern, query parameters and the request body from the zod schemas the route validates with,
// success answers from the response schemas beside the renderers, and error answers from the codes the
// route and the middleware in front of it raise (error-answers.ts). Nothing here is written per route.

import type { Router } from '@koa/router';
import type { z } from 'zod';
import type { ErrorCode } from '../api-error.js';
import { errorEnvelopeSchema } from '../middleware/error-envelope.js';
import { routeAccess, type RouteAccess } from '../access/route-scopes.js';
import { byStatus, errorCodesOf } from './error-answers.js';
import { ERROR_MEANINGS } from './error-meanings.js';
import { jsonSchemaOf, type JsonSchema, type SchemaForm } from './json-schema.js';
import { routeDocs, type RouteDoc, type SuccessAnswer } from './route-docs.js';

export interface DocumentOptions {
  version: string;
}

export const OPENAPI_VERSION = '3.1.0';
const COMPONENT_REF = '#/components/schemas/';
const UNDOCUMENTED = 'x-folio-undocumented';

/** `METHOD /pattern` of every route the router answers (HEAD aside: it follows GET). */
export function routerRoutes(router: Router): Array<{ method: string; path: string; paramNames: string[] }> {
  const routes: Array<{ method: string; path: string; paramNames: string[] }> = [];
  for (const layer of router.stack) {
    for (const method of layer.methods) {
      if (method === 'HEAD') continue;
      routes.push({ method, path: String(layer.path), paramNames: layer.paramNames.map((key) => String(key.name)) });
    }
  }
  return routes;
}

export function openApiDocument(router: Router, options: DocumentOptions): Record<string, unknown> {
  const components = new ComponentSchemas();
  const docs = routeDocs(router);
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const route of routerRoutes(router)) {
    const doc = docs.get(`${route.method} ${route.path}`);
    if (doc) tags.add(doc.tag);
    const operation = doc
      ? documentedOperation(route, doc, components)
      : undocumentedOperation(route);
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Folio ledger API',
      version: options.version,
      description: 'A double-entry ledger with exact money and a durable write-ahead log. Amounts are exact: '
        + '`precise_amount` is an integer in the smallest unit (`precision` units make one), sent and answered as JSON integers '
        + 'of any size. A write is answered only once it is on disk. Every refusal is an `ErrorEnvelope` with a stable code.',
    },
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      schemas: components.all(),
      examples: errorExamples(),
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-svc-key', description: 'The master key or an API key (X-Blnk-Key is accepted too)' },
        bearer: { type: 'http', scheme: 'bearer', description: 'The same key as a bearer token' },
      },
    },
  };
}

/** `/transactions/:id` as OpenAPI writes it: `/transactions/{id}`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operationId(method: string, path: string): string {
  return `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/_$/, '')}`;
}

type Route = { method: string; path: string; paramNames: string[] };

function documentedOperation(route: Route, doc: RouteDoc, components: ComponentSchemas): Record<string, unknown> {
  const access = routeAccess(route.method, route.path);
  const operation: Record<string, unknown> = {
    operationId: operationId(route.method, route.path),
    tags: [doc.tag],
    summary: doc.summary,
    description: [doc.description, accessText(access)].filter(Boolean).join('\n\n'),
    parameters: [...pathParameters(route, doc), ...queryParameters(doc, components)],
  };
  if (access.kind === 'public') operation.security = [];
  if (doc.body) {
    const media: Record<string, unknown> = { schema: components.schemaOf(doc.body, 'input') };
    if (doc.bodyExample !== undefined) media.example = doc.bodyExample;
    operation.requestBody = { required: doc.bodyRequired ?? true, content: { 'application/json': media } };
  }
  const responses: Record<string, unknown> = {};
  for (const answer of doc.answers) responses[String(answer.status)] = successResponse(answer, components);
  for (const [status, codes] of byStatus(errorCodesOf(route.method, route.path, doc))) {
    responses[String(status)] = errorResponse(codes, components);
  }
  operation.responses = responses;
  return operation;
}

function undocumentedOperation(route: Route): Record<string, unknown> {
  return {
    operationId: operationId(route.method, route.path),
    summary: `${route.method} ${route.path} (not documented yet)`,
    [UNDOCUMENTED]: true,
    parameters: route.paramNames.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    responses: { default: { description: 'not documented yet: declare it with describeRoute next to the route' } },
  };
}

/** Whether an operation of the document stands for a route that has no declaration. */
export function isUndocumented(operation: Record<string, unknown>): boolean {
  return operation[UNDOCUMENTED] === true;
}

function accessText(access: RouteAccess): string {
  switch (access.kind) {
    case 'public': return 'Access: public, no key needed.';
    case 'any_key': return 'Access: any valid API key, whatever its scopes (or the master key).';
    case 'master': return 'Access: the master key only.';
    case 'scope': return `Access: an API key with the scope \`${access.resource}:${access.action}\` (or the master key).`;
    case 'param_scope': return `Access: an API key with the scope \`<${access.param}>:${access.action}\` (or the master key).`;
  }
}

function pathParameters(route: Route, doc: RouteDoc): Array<Record<string, unknown>> {
  return route.paramNames.map((name) => {
    const parameter: Record<string, unknown> = { name, in: 'path', required: true, schema: { type: 'string' } };
    const words = doc.params?.[name];
    if (words) parameter.description = words;
    return parameter;
  });
}

function queryParameters(doc: RouteDoc, components: ComponentSchemas): Array<Record<string, unknown>> {
  if (!doc.query) return [];
  const schema = components.schemaOf(doc.query, 'input');
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const shape = (doc.query as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
  return Object.entries(properties).map(([name, property]) => {
    // Required only when the field refuses to be left out: a default or a preprocess makes it optional.
    const field = shape[name];
    const required = field !== undefined && !field.safeParse(undefined).success;
    const parameter: Record<string, unknown> = { name, in: 'query', required, schema: property };
    if (typeof property.description === 'string') parameter.description = property.description;
    return parameter;
  });
}

function successResponse(answer: SuccessAnswer, components: ComponentSchemas): Record<string, unknown> {
  if (!answer.schema) return { description: answer.description };
  const media: Record<string, unknown> = { schema: components.schemaOf(answer.schema, 'output') };
  if (answer.example !== undefined) media.example = answer.example;
  const types = typeof answer.contentType === 'string' ? [answer.contentType] : answer.contentType ?? ['application/json'];
  return { description: answer.description, content: Object.fromEntries(types.map((type) => [type, media])) };
}

function errorResponse(codes: readonly ErrorCode[], components: ComponentSchemas): Record<string, unknown> {
  const examples: Record<string, unknown> = {};
  for (const code of codes) examples[code] = { $ref: `#/components/examples/${code}` };
  const response: Record<string, unknown> = {
    description: codes.join(', '),
    content: { 'application/json': { schema: components.schemaOf(errorEnvelopeSchema, 'output'), examples } },
  };
  if (codes.includes('GEN_RATE_LIMITED')) response.headers = RATE_LIMITED_HEADERS;
  return response;
}

/** What a 429 of fair use says besides its envelope (http/access/rate-buckets.ts). */
const RATE_LIMITED_HEADERS = {
  'Retry-After': { description: 'Whole seconds, at least 1, until the key is admitted again', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Limit': { description: "The key's burst: requests its bucket holds", schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Remaining': { description: 'Requests the bucket would admit at once now (0 on a 429)', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Whole seconds until the bucket is full again', schema: { type: 'integer', minimum: 0 } },
};

/** One example envelope per error code, referred to by every response that can carry the code. */
function errorExamples(): Record<string, unknown> {
  const examples: Record<string, unknown> = {};
  for (const code of Object.keys(ERROR_MEANINGS) as ErrorCode[]) examples[code] = { summary: ERROR_MEANINGS[code], value: errorExample(code) };
  return examples;
}

function errorExample(code: ErrorCode): Record<string, unknown> {
  const message = code === 'GEN_VALIDATION_ERROR' ? 'invalid request: currency: must be 1 to 32 letters, digits or _ . : -' : ERROR_MEANINGS[code];
  const detail: Record<string, unknown> = { code, message };
  if (code === 'GEN_VALIDATION_ERROR') detail.details = { currency: 'must be 1 to 32 letters, digits or _ . : -' };
  return { error: message, error_detail: detail };
}

/**
 * Schemas named with `.meta({ id })` are kept once, under components, and referred to; a name given to
 * two different schemas is a mistake caught here.
 */
class ComponentSchemas {
  private readonly named = new Map<string, JsonSchema>();

  schemaOf(schema: z.ZodType, form: SchemaForm): JsonSchema {
    const converted = jsonSchemaOf(schema, form);
    const { $defs, ...rest } = converted as JsonSchema & { $defs?: Record<string, JsonSchema> };
    for (const [name, definition] of Object.entries($defs ?? {})) this.add(name, withComponentRefs(definition) as JsonSchema);
    return withComponentRefs(rest) as JsonSchema;
  }

  all(): Record<string, JsonSchema> {
    return Object.fromEntries([...this.named.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  private add(name: string, definition: JsonSchema): void {
    const existing = this.named.get(name);
    if (existing && JSON.stringify(existing) !== JSON.stringify(definition)) {
      throw new Error(`two different schemas are named ${name} (or one differs as input and as output)`);
    }
    this.named.set(name, definition);
  }
}

function withComponentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withComponentRefs);
  if (typeof value !== 'object' || value === null) return value;
  const result: JsonSchema = {};
  for (const [key, item] of Object.entries(value)) {
    result[key] = key === '$ref' && typeof item === 'string' ? item.replace('#/$defs/', COMPONENT_REF) : withComponentRefs(item);
  }
  return result;
}
