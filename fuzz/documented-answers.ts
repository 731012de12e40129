// The answer oracle of the API reference: every answer the server gives must be one its OpenAPI document
// (GET /openapi.json, generated from the routes' declarations by http/openapi/) says the request can get.
//   - The request is matched to the document's operations the way the router matches it (the path as
//     sent, before the query; case-sensitive; a trailing slash optional; a parameter is one segment
//     that is not empty). HEAD is matched to GET and only its status is checked: it has no body.
//   - Matched: the status must be documented for the operation; a documented body's content type must
//     be the documented one, and a JSON body must fit the documented schema (JSON Schema 2020-12, ajv);
//     an error's `error_detail.code` must be one the operation lists for that status (the examples of
//     the error answer are keyed by code). A request several operations match (`/search/reindex` is
//     also `/search/{collection}`) may get an answer any of them documents.
//   - Matched by no operation: the document cannot speak for the request, so the answer must be the
//     error envelope (its schema from the document) with GEN_NOT_FOUND, GEN_METHOD_NOT_ALLOWED, or a
//     code the middleware in front of the router gives such a request (error-answers.ts, the rules the
//     document's common codes come from); or, for OPTIONS, the router's list of allowed methods (a 200
//     or 204 with no body and an Allow header).
// Requests Node's parser refuses for their header size are not judged (answer-oracle.ts).

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { errorCodesOf } from '../http/openapi/error-answers.js';
import { envelopeCode, isParserRefused, type AnswerOracle, type Failure } from './answer-oracle.js';
import type { SentCase } from './fuzz-case.js';
import type { FuzzAnswer } from './fuzz-request.js';

type Json = Record<string, unknown>;

interface MediaDoc {
  schema?: Json;
  examples?: Json;
}

interface ResponseDoc {
  content?: Record<string, MediaDoc>;
}

export interface DocumentedOperation {
  /** `METHOD /template` as the document writes it, e.g. `GET /ledgers/{id}`. */
  key: string;
  method: string;
  pattern: RegExp;
  responses: Record<string, ResponseDoc>;
}

/** Codes a request no operation matches may get besides the middleware's: the router's own refusals. */
const UNROUTED_CODES: readonly string[] = ['GEN_NOT_FOUND', 'GEN_METHOD_NOT_ALLOWED'];
const JSON_MEDIA = 'application/json';
/** Validation errors are cut to this many characters in a report. */
const VALIDATION_TEXT_CHARS_MAX = 600;

/** A mismatch of one answer with one operation: a short kind for grouping, and the whole story. */
interface Mismatch {
  problem: string;
  detail: string;
}

export class DocumentedAnswers {
  private readonly operations: DocumentedOperation[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly components: unknown;

  constructor(document: Json) {
    this.components = document.components;
    for (const [template, methods] of Object.entries((document.paths ?? {}) as Record<string, Record<string, Json>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        this.operations.push({
          key: `${method.toUpperCase()} ${template}`, method: method.toUpperCase(), pattern: templatePattern(template),
          responses: (operation.responses ?? {}) as Record<string, ResponseDoc>,
        });
      }
    }
  }

  /** The oracle, for a session's `oracles`. */
  get oracle(): AnswerOracle {
    return (sent, answer) => this.check(sent, answer);
  }

  /** The operations a request is matched to (HEAD as GET). */
  operationsFor(method: string, path: string): DocumentedOperation[] {
    const pathname = path.split('?', 1)[0]!;
    const wanted = method === 'HEAD' ? 'GET' : method;
    return this.operations.filter((operation) => operation.method === wanted && operation.pattern.test(pathname));
  }

  check(sent: SentCase, answer: FuzzAnswer): Failure[] {
    if (answer.kind === 'no-answer' || isParserRefused(sent, answer)) return [];
    const { method, path } = sent.request;
    const candidates = this.operationsFor(method, path);
    const code = answer.status >= 400 ? envelopeCode(answer.text) : undefined;
    const answered = `${answer.status}${code ? ` ${code}` : ''}`;
    if (candidates.length === 0) {
      const mismatch = this.unroutedMismatch(method, path, answer, code);
      if (!mismatch) return [];
      return [{ kind: 'undocumented-answer', group: `${method} (no operation) | ${answered} | ${mismatch.problem}`, detail: mismatch.detail }];
    }
    const mismatches: Array<[DocumentedOperation, Mismatch]> = [];
    for (const operation of candidates) {
      const mismatch = this.mismatch(operation, method, answer, code);
      if (!mismatch) return [];
      mismatches.push([operation, mismatch]);
    }
    const [operation, first] = mismatches[0]!;
    const others = mismatches.slice(1).map(([other, mismatch]) => `; as ${other.key}: ${mismatch.detail}`).join('');
    return [{ kind: 'undocumented-answer', group: `${operation.key} | ${answered} | ${first.problem}`, detail: `${operation.key}: ${first.detail}${others}` }];
  }

  private mismatch(operation: DocumentedOperation, method: string, answer: FuzzAnswer & { kind: 'answer' }, code: string | undefined): Mismatch | undefined {
    const status = String(answer.status);
    const response = operation.responses[status];
    if (!response) {
      const documented = Object.keys(operation.responses).join(', ');
      return { problem: 'status not documented', detail: `status ${status}${code ? ` (${code})` : ''} is not documented (documented: ${documented})` };
    }
    const contents = Object.entries(response.content ?? {});
    if (method === 'HEAD') return undefined;
    if (contents.length === 0) {
      return answer.text === '' ? undefined : { problem: 'body where none is documented', detail: `status ${status} is documented without a body, and has one` };
    }
    const contentType = String(answer.headers['content-type'] ?? '');
    const essence = contentType.split(';', 1)[0]!.trim().toLowerCase();
    const found = contents.find(([mediaType]) => mediaType === essence);
    if (!found) {
      return { problem: 'content type not documented', detail: `content type ${JSON.stringify(contentType)} is not the documented ${contents.map(([type]) => type).join(' or ')}` };
    }
    const [mediaType, media] = found;
    // Pages, scripts, styles and the metrics text: their type is what the document says of them.
    if (mediaType !== JSON_MEDIA || !media.schema) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return { problem: 'body is not JSON', detail: `the body is not JSON: ${JSON.stringify(answer.text.slice(0, 200))}` };
    }
    const invalid = this.validationError(`${operation.key} ${status}`, media.schema, body);
    if (invalid) return { problem: 'body does not fit the schema', detail: `the ${status} body does not fit the documented schema: ${invalid}` };
    if (answer.status >= 400) {
      const codes = Object.keys(media.examples ?? {});
      if (code === undefined || !codes.includes(code)) {
        return { problem: 'code not documented', detail: `code ${code ?? '(none)'} is not documented for status ${status} (documented: ${codes.join(', ')})` };
      }
    }
    return undefined;
  }

  private unroutedMismatch(method: string, path: string, answer: FuzzAnswer & { kind: 'answer' }, code: string | undefined): Mismatch | undefined {
    if (method === 'OPTIONS' && (answer.status === 200 || answer.status === 204)) {
      if (answer.text === '' && answer.headers.allow !== undefined) return undefined;
      return { problem: 'OPTIONS answer', detail: `OPTIONS answered ${answer.status} with ${answer.text === '' ? 'no Allow header' : 'a body'}` };
    }
    if (answer.status < 400) return { problem: 'success without an operation', detail: `answered ${answer.status} to a request no documented operation matches` };
    if (method === 'HEAD') return undefined;
    const envelope = ((this.components as { schemas?: Record<string, Json> } | undefined)?.schemas ?? {}).ErrorEnvelope;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return { problem: 'body is not JSON', detail: `the body is not JSON: ${JSON.stringify(answer.text.slice(0, 200))}` };
    }
    const invalid = envelope ? this.validationError('ErrorEnvelope', envelope, body) : 'the document has no ErrorEnvelope schema';
    if (invalid) return { problem: 'body does not fit the schema', detail: `the body is not the error envelope: ${invalid}` };
    const pathname = path.split('?', 1)[0]!;
    const allowed = new Set<string>([...UNROUTED_CODES, ...errorCodesOf(method, pathname, undefined)]);
    if (code === undefined || !allowed.has(code)) {
      return { problem: 'code not documented', detail: `code ${code ?? '(none)'} answered to a request no documented operation matches (allowed: ${[...allowed].join(', ')})` };
    }
    return undefined;
  }

  private validationError(cacheKey: string, schema: Json, value: unknown): string | undefined {
    let validate = this.validators.get(cacheKey);
    if (!validate) {
      // The document's components go along, so `#/components/schemas/...` resolves inside the schema.
      validate = this.ajv.compile({ ...schema, components: this.components });
      this.validators.set(cacheKey, validate);
    }
    if (validate(value)) return undefined;
    const text = this.ajv.errorsText(validate.errors);
    return text.length > VALIDATION_TEXT_CHARS_MAX ? `${text.slice(0, VALIDATION_TEXT_CHARS_MAX)}…` : text;
  }
}

/**
 * A document path template as the router matches it (http/router-options.ts): case-sensitive, the
 * trailing slash optional, a `{parameter}` any non-empty text without a slash, matched against the path
 * as sent (the router does not decode it before matching).
 */
export function templatePattern(template: string): RegExp {
  const parts = template.split(/(\{[A-Za-z0-9_]+\})/).filter((part) => part !== '');
  const source = parts.map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  const trimmed = source.endsWith('/') ? source.slice(0, -1) : source;
  return new RegExp(`^${trimmed}/?$`);
}
