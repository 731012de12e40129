// Reconciliation calls for tests: uploads as real multipart bodies (FormData, as curl -F sends them),
// rules, runs, and waiting for a background run to finish.

import type { TestResponse, TestServer } from './test-server.js';
import { parseJsonExact } from '../../http/schemas/lossless-json.js';

export async function uploadFile(baseUrl: string, file: { name: string; type?: string; text: string }, source: string | undefined, headers: Record<string, string> = {}): Promise<TestResponse> {
  const form = new FormData();
  form.set('file', new Blob([file.text], { type: file.type ?? 'application/octet-stream' }), file.name);
  if (source !== undefined) form.set('source', source);
  const response = await fetch(`${baseUrl}/reconciliation/upload`, { method: 'POST', body: form, headers });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = parseJsonExact(text);
  } catch {
    // not JSON: left as text
  }
  return { status: response.status, headers: Object.fromEntries(response.headers.entries()), text, body };
}

/** One line of an uploaded statement, as the JSON upload takes it. */
export interface StatementLine {
  id: string;
  amount: string;
  currency: string;
  reference: string;
  description: string;
  date: string;
  source: string;
}

/** A statement as CSV text with the columns in the order given (any case). */
export function csvOf(rows: Array<Record<string, string>>, columns = ['id', 'amount', 'currency', 'reference', 'description', 'date']): string {
  const quote = (value: string): string => (/[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  const lines = [columns.join(',')];
  for (const row of rows) lines.push(columns.map((column) => quote(row[column.toLowerCase()] ?? '')).join(','));
  return lines.join('\n') + '\n';
}

export async function createRule(server: TestServer, body: unknown): Promise<string> {
  const response = await server.request('POST', '/reconciliation/matching-rules', body);
  if (response.status !== 201) throw new Error(`rule: ${response.status} ${response.text}`);
  return response.body.rule_id as string;
}

/** Polls GET /reconciliation/:id until the run has finished (completed or failed). */
export async function waitForRun(server: TestServer, reconciliationId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await server.request('GET', `/reconciliation/${reconciliationId}`);
    if (response.status !== 200) throw new Error(`status: ${response.status} ${response.text}`);
    if (response.body.status === 'completed' || response.body.status === 'failed') return response.body;
    if (Date.now() > deadline) throw new Error(`run ${reconciliationId} still ${response.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every page of a run's matches or unmatched records. */
export async function allResults(server: TestServer, reconciliationId: string, kind: 'matches' | 'unmatched', limit = 1_000): Promise<any[]> {
  const data: any[] = [];
  for (let offset = 0; ; offset += limit) {
    const response = await server.request('GET', `/reconciliation/${reconciliationId}/${kind}?limit=${limit}&offset=${offset}`);
    if (response.status !== 200) throw new Error(`${kind}: ${response.status} ${response.text}`);
    data.push(...response.body.data);
    if (response.body.data.length < limit) return data;
  }
}
