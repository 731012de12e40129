// The rules every answer must keep, whatever was sent:
//   - an answer at all, within the timeout (else a hang, or a dropped connection);
//   - a 2xx or a 4xx: no 5xx, except the three documented "try again shortly" answers, a 503 with
//     Retry-After and code QUEUE_BACKPRESSURE (a full mailbox), SRCH_INDEX_BEHIND (a query that the
//     index could not catch up for in time) or SNAPSHOT_UNAVAILABLE (a snapshot request that waited its
//     30 s behind snapshot jobs), which are counted apart; that the index does catch up in the end is
//     checked after the run (ledger-checks.ts), and a snapshot job that fails answers without
//     Retry-After, so it stays a failure;
//   - a 4xx carries the error envelope {error, error_detail: {code, message}} (a HEAD answer has no body),
//     except an HTML page from a route that serves pages (the cloud's sign-in page), which may also
//     answer with a redirect (302 or 303);
//   - no body holds a stack trace or a path of the server's files;
//   - an accepted transaction carries the precise amount its request implied, as a JSON integer.
// Each broken rule is a `Failure` with a kind from a closed set. A session may add oracles of its own
// (`AnswerOracle`): documented-answers.ts checks every answer against the server's API reference.
//
// One exception is made: a request whose header section is larger than Node's HTTP parser accepts
// (16 KiB) is refused by Node itself before Folio sees it, with a bare 431 and a closed connection that
// a client still sending often sees only as a reset. Such answers are counted (`parserRefused`) but not
// judged; any 5xx among them is still a failure.

import type { SentCase } from './fuzz-case.js';
import type { FuzzAnswer } from './fuzz-request.js';
import { answeredPreciseAmount, impliedPreciseAmount } from './exact-amounts.js';

export const FAILURE_KINDS = [
  'hang', 'no-answer', 'server-error', 'unexpected-status', 'no-envelope', 'stack-trace', 'inexact-amount', 'undocumented-answer',
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface Failure {
  kind: FailureKind;
  detail: string;
  /**
   * What the failure is about, when the route aimed at and the status do not say it: failures are then
   * grouped by kind and this alone (an undocumented answer by the operation, status, code and problem).
   */
  group?: string;
}

/** A check of one answer beside the ones every run makes (checkAnswer). */
export type AnswerOracle = (sent: SentCase, answer: FuzzAnswer) => Failure[];

/** Lines of a stack trace, or paths into the server's files. */
const STACK_TRACE = /\n\s+at \S|\bat [^\n"]*\((?:file:|node:|\/)[^)"]*:\d+:\d+\)|node_modules[\\/]|\/work\/|\.(?:ts|js|mjs):\d+:\d+/;

/** The error code of an answer in the envelope, if it has one. */
export function envelopeCode(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; error_detail?: { code?: unknown; message?: unknown } };
    if (typeof body !== 'object' || body === null || typeof body.error !== 'string') return undefined;
    const detail = body.error_detail;
    if (typeof detail?.code !== 'string' || typeof detail.message !== 'string') return undefined;
    return detail.code;
  } catch {
    return undefined;
  }
}

/** The 5xx codes that say "try again shortly" (with Retry-After) rather than "something broke". */
export const RETRY_LATER_CODES: readonly string[] = ['QUEUE_BACKPRESSURE', 'SRCH_INDEX_BEHIND', 'SNAPSHOT_UNAVAILABLE'];

/** True for a 503 an overloaded server may give: a retry-later code, with Retry-After. */
export function isRetryLater(answer: FuzzAnswer): boolean {
  if (answer.kind !== 'answer' || answer.status !== 503 || answer.headers['retry-after'] === undefined) return false;
  const code = envelopeCode(answer.text);
  return code !== undefined && RETRY_LATER_CODES.includes(code);
}

/** Node's default limit on the request line and headers together (`--max-http-header-size`). */
export const HEADER_SECTION_BYTES_MAX = 16 * 1024;

/** Bytes of the request line and headers as sent, about (Host and framing headers add a few). */
export function headerSectionBytes(sent: SentCase): number {
  let bytes = sent.request.method.length + sent.request.path.length + 12;
  for (const [name, value] of Object.entries(sent.request.headers)) bytes += name.length + value.length + 4;
  return bytes;
}

/** True when Node's parser refuses the request before Folio sees it (see the header comment). */
export function isParserRefused(sent: SentCase, answer: FuzzAnswer): boolean {
  if (headerSectionBytes(sent) <= HEADER_SECTION_BYTES_MAX) return false;
  return answer.kind === 'no-answer' ? !answer.timedOut : answer.status === 431;
}

export function checkAnswer(sent: SentCase, answer: FuzzAnswer): Failure[] {
  if (isParserRefused(sent, answer)) return [];
  if (answer.kind === 'no-answer') {
    // The client could not even send it: nothing the server did.
    if (answer.error.startsWith('not sendable')) return [];
    return [{ kind: answer.timedOut ? 'hang' : 'no-answer', detail: answer.error }];
  }
  const failures: Failure[] = [];
  const { status, text } = answer;
  const page = sent.page === true && String(answer.headers['content-type'] ?? '').startsWith('text/html');
  const redirect = sent.page === true && (status === 302 || status === 303);
  if (status >= 500 && !isRetryLater(answer)) failures.push({ kind: 'server-error', detail: `${status} ${text.slice(0, 300)}` });
  else if (status < 200 || (status >= 300 && status < 400 && !redirect)) failures.push({ kind: 'unexpected-status', detail: `${status}` });
  if (status >= 400 && sent.request.method !== 'HEAD' && !page && envelopeCode(text) === undefined) {
    failures.push({ kind: 'no-envelope', detail: `${status} ${JSON.stringify(text.slice(0, 200))}` });
  }
  const trace = STACK_TRACE.exec(text);
  if (trace && !requestText(sent).includes(trace[0])) failures.push({ kind: 'stack-trace', detail: JSON.stringify(text.slice(Math.max(0, trace.index - 100), trace.index + 200)) });
  const inexact = checkExactAmount(sent, answer.status, text);
  if (inexact) failures.push(inexact);
  return failures;
}

function requestText(sent: SentCase): string {
  const body = sent.request.body;
  return `${sent.request.path}\n${JSON.stringify(sent.request.headers)}\n${typeof body === 'string' ? body : body?.toString('latin1') ?? ''}`;
}

/** An accepted transaction (not a dry run) must carry the implied amount as a JSON integer. */
function checkExactAmount(sent: SentCase, status: number, text: string): Failure | undefined {
  if (sent.request.method !== 'POST' || !sent.routeKey.endsWith(' /transactions') || status < 200 || status >= 300 || text.includes('"dry_run":true')) return undefined;
  const answered = answeredPreciseAmount(text);
  if (answered === undefined) return { kind: 'inexact-amount', detail: `accepted transaction without an integer precise_amount: ${text.slice(0, 300)}` };
  const implied = impliedPreciseAmount(sent.body);
  if (implied === undefined || implied.toString() === answered) return undefined;
  return { kind: 'inexact-amount', detail: `request implies precise_amount ${implied}, answer has ${answered}` };
}
