// Shared pieces of the integration tests: a test server whose data directory is removed in teardown,
// the error-envelope check every failing response must pass, funding through @world, and polling for a
// queued transaction to reach its final status.

import fs from 'node:fs';
import type { Test } from 'tap';
import type { RuntimeOptions } from '../../runtime/ledger-runtime.js';
import { zeroSumViolations } from './engine-rig.js';
import { startTestServer, type TestResponse, type TestServer } from './test-server.js';

export async function openServer(t: Test, options: Partial<RuntimeOptions> = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  t.teardown(async () => {
    await server.stop();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  });
  return server;
}

/** Asserts the status and the error envelope `{error, error_detail: {code, message, details?}}`. */
export function expectError(t: Test, response: TestResponse, status: number, code: string, label: string): void {
  t.equal(response.status, status, `${label}: status ${status}`);
  t.match(response.headers['content-type'], /^application\/json/, `${label}: JSON body`);
  const body = response.body as { error?: unknown; error_detail?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
  t.equal(body?.error_detail?.code, code, `${label}: code ${code}`);
  t.type(body?.error, 'string', `${label}: error is a string`);
  t.type(body?.error_detail?.message, 'string', `${label}: message is a string`);
  t.notMatch(response.text, /\n\s+at |node_modules|\.ts:\d+/, `${label}: no stack trace`);
}

/** Credits `destination` from @world synchronously; returns the transaction. */
export async function fund(server: TestServer, destination: string, preciseAmount: bigint | number | string, currency = 'USD'): Promise<Record<string, unknown>> {
  const response = await server.request('POST', '/transactions', {
    description: 'test', precise_amount: preciseAmount,
    currency, source: '@world', destination, allow_overdraft: true, skip_queue: true,
  });
  if (response.status !== 201) throw new Error(`funding ${destination} failed: ${response.status} ${response.text}`);
  return response.body as Record<string, unknown>;
}

export async function createBalance(server: TestServer, fields: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const response = await server.request('POST', '/balances', { ledger_id: 'general_ledger_id', currency: 'USD', ...fields });
  if (response.status !== 201) throw new Error(`balance creation failed: ${response.status} ${response.text}`);
  return response.body as Record<string, any>;
}

/**
 * Reads a transaction until it leaves QUEUED. The bound is only there so a stuck queue fails the test
 * instead of hanging it; nothing here measures speed.
 */
export async function waitUntilDecided(server: TestServer, transactionId: string, boundMs = 20_000): Promise<TestResponse> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const response = await server.request('GET', `/transactions/${transactionId}`);
    if (response.status !== 200 || response.body.status !== 'QUEUED' || Date.now() > deadline) return response;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Waits until the runtime has no queued work (same bound rule as above). */
export async function waitForEmptyQueue(server: TestServer, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (server.runtime.engine.view.queuedCount() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}

export function checkZeroSum(t: Test, server: TestServer, label: string): void {
  t.same(zeroSumViolations(server.runtime.engine.state), [], `zero-sum ${label}`);
}
