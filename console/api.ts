// The public API as the console calls it: every call carries the key the person entered (X-svc-key), to
// the server that served the console, or, when the cloud's control plane served it, through the cloud's
// proxy (`/proxy/<path>?instance_id=<id>`) with the person's cloud token. Answers are parsed keeping each
// number's own text (JSON.parse's source text access): an integer a double cannot hold exactly stays a
// string of digits, so no amount is ever rounded. A refusal is thrown as an ApiFailure carrying the
// API's error envelope as it came (status, code, message, details) for the page to show plainly.
// The change feed is read with fetch and a stream (an EventSource cannot send the key header).

export interface Failure {
  status: number;
  code: string;
  message: string;
  details?: unknown;
}

export class ApiFailure extends Error {
  constructor(readonly failure: Failure) {
    super(`${failure.code}: ${failure.message}`);
  }
}

export interface Connection {
  /** core: the API is this origin's; proxy: the cloud's proxy to the core `instanceId`. */
  mode: 'core' | 'proxy';
  /** The key (or cloud token); empty when the server runs without authentication. */
  key: string;
  instanceId?: string;
}

/** Every call is bounded: a server that does not answer in this long is reported, not waited for. */
const CALL_TIMEOUT_MS = 30_000;

let connection: Connection = { mode: 'core', key: '' };

export function useConnection(next: Connection): void {
  connection = next;
}

export function currentConnection(): Connection {
  return connection;
}

type QueryValue = string | number | boolean | undefined;

export interface CallOptions {
  query?: Record<string, QueryValue>;
  /** A JSON body (amounts as strings of digits, which the API takes as exactly as integers). */
  body?: unknown;
  /** A multipart body (a reconciliation upload). */
  form?: FormData;
  signal?: AbortSignal;
  /** Extra headers (Accept for the change feed). */
  headers?: Record<string, string>;
}

/** The URL of an API path on this connection, with the query. */
export function apiUrl(path: string, query: Record<string, QueryValue> = {}, on: Connection = connection): string {
  const params = new URLSearchParams();
  if (on.mode === 'proxy') params.set('instance_id', on.instanceId ?? '');
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return `${on.mode === 'proxy' ? '/proxy' : ''}${path}${text === '' ? '' : `?${text}`}`;
}

/** Whether this browser hands JSON.parse's reviver each number's text (needed for exact amounts). */
export function exactJsonSupported(): boolean {
  try {
    return JSON.parse('12345678901234567890', (_key, value, context?: { source?: string }) => context?.source ?? value) === '12345678901234567890';
  } catch {
    return false;
  }
}

/**
 * JSON with every integer kept exact: a safe one as a number, a larger one (an amount beyond 2^53) as
 * the text of its digits. Decimals stay numbers: the API's decimals are display values and durations;
 * the console shows money only from the exact integers (precise_*).
 */
export function parseExact(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    if (typeof value !== 'number' || Number.isSafeInteger(value)) return value;
    const source = context?.source;
    return source !== undefined && /^-?\d+$/.test(source) ? source : value;
  });
}

function requestHeaders(options: CallOptions, on: Connection): Headers {
  const headers = new Headers(options.headers);
  if (on.key !== '') headers.set('X-svc-key', on.key);
  if (options.body !== undefined) headers.set('Content-Type', 'application/json');
  return headers;
}

function boundedSignal(signal: AbortSignal | undefined): AbortSignal {
  const timeout = AbortSignal.timeout(CALL_TIMEOUT_MS);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

/** The API's envelope, or the best account of an answer that is not one. */
function failureOf(status: number, text: string): Failure {
  try {
    const envelope = parseExact(text) as { error?: unknown; error_detail?: { code?: unknown; message?: unknown; details?: unknown } };
    const detail = envelope.error_detail;
    if (detail && typeof detail.code === 'string') {
      return { status, code: detail.code, message: String(detail.message ?? envelope.error ?? ''), details: detail.details };
    }
  } catch {
    // not JSON: said below
  }
  return { status, code: `HTTP_${status}`, message: text.slice(0, 500) || `the server answered ${status}` };
}

/** Calls the API; the parsed answer, or throws an ApiFailure (the network's failures included). */
export async function api<T = unknown>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const on = connection;
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query, on), {
      method,
      headers: requestHeaders(options, on),
      body: options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
      signal: boundedSignal(options.signal),
      credentials: 'omit',
      cache: 'no-store',
      // A standby answers a write it does not forward with 307 to its leader: another origin, which this
      // page may not call. Said plainly below rather than followed.
      redirect: 'manual',
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new ApiFailure({
      status: 0, code: timedOut ? 'TIMEOUT' : 'NETWORK',
      message: timedOut ? `no answer within ${CALL_TIMEOUT_MS / 1000} s` : `the server could not be reached (${(error as Error).message})`,
    });
  }
  if (response.type === 'opaqueredirect') {
    throw new ApiFailure({
      status: 307, code: 'REDIRECTED',
      message: 'this node sent the request on to another address (a standby sends writes to its leader): open the console on the leader to write',
    });
  }
  const text = await response.text();
  if (!response.ok) throw new ApiFailure(failureOf(response.status, text));
  return (text === '' ? undefined : parseExact(text)) as T;
}

export interface FeedEvent {
  id: string;
  event: string;
  data: string;
}

/**
 * Reads a Server-Sent Events answer (the change feed) until `signal` aborts or the server ends it,
 * calling `onEvent` for each event. Resolves when the stream ends; throws an ApiFailure when refused.
 */
export async function readEventStream(path: string, query: Record<string, QueryValue>, onEvent: (event: FeedEvent) => void, signal: AbortSignal): Promise<void> {
  const on = connection;
  const response = await fetch(apiUrl(path, query, on), {
    headers: requestHeaders({ headers: { Accept: 'text/event-stream' } }, on), signal, credentials: 'omit', cache: 'no-store', redirect: 'manual',
  });
  if (!response.ok || !response.body) throw new ApiFailure(failureOf(response.status, await response.text()));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event: FeedEvent = { id: '', event: 'message', data: '' };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      if (line === '') {
        if (event.data !== '' || event.id !== '') onEvent(event);
        event = { id: event.id, event: 'message', data: '' };
        continue;
      }
      if (line.startsWith(':')) continue; // a heartbeat comment
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const data = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') event.id = data;
      else if (field === 'event') event.event = data;
      else if (field === 'data') event.data = event.data === '' ? data : `${event.data}\n${data}`;
    }
  }
}
