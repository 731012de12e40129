// Balance history over HTTP on the real server (issue 17): GET /balances/:id/at answered from the index
// (`from_source: false`) at any moment, before the balance existed, in the future and inside one busy
// millisecond, falling back to the fold when the index does not run; GET /balances/:id/history pages
// the balance after each change in a window by cursor, with its limits and refusals.

import t from 'tap';
import { foldBalance } from '../engine/balance-fold.js';
import type { LedgerEvent } from '../engine/events.js';
import { HISTORY_LIMIT_MAX } from '../http/routes/balance-history-routes.js';
import { balanceView } from '../wire/views.js';
import { toJsonText } from '../wire/json-text.js';
import { createBalance, expectError, openServer } from './helpers/http-fixture.js';
import type { TestServer } from './helpers/test-server.js';

async function transfer(server: TestServer, source: string, destination: string, preciseAmount: number, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const response = await server.request('POST', '/transactions', {
    description: 'test', currency: 'USD', source, destination, precise_amount: preciseAmount, allow_overdraft: true, skip_queue: true, ...extra,
  });
  if (response.status !== 201) throw new Error(`transfer refused: ${JSON.stringify(response.body)}`);
  return response.body;
}

async function allPages(server: TestServer, route: string): Promise<{ changes: Array<Record<string, any>>; pages: number }> {
  const changes: Array<Record<string, any>> = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = route.includes('?') ? '&' : '?';
    const response = await server.request('GET', cursor ? `${route}${separator}cursor=${encodeURIComponent(cursor)}` : route);
    if (response.status !== 200) throw new Error(`history page refused: ${JSON.stringify(response.body)}`);
    changes.push(...response.body.changes);
    cursor = response.body.next_cursor;
    pages += 1;
  } while (cursor !== null && pages < 1_000);
  return { changes, pages };
}

t.test('the balance as of a moment, and its changes page by page', async (t) => {
  const server = await openServer(t);
  const balance = await createBalance(server, { meta_data: { tier: 'gold' } });
  const id = balance.balance_id as string;
  // Transfers sent ten at a time, decided as fast as they come: several share a millisecond.
  for (let round = 0; round < 6; round += 1) {
    await Promise.all(Array.from({ length: 10 }, (_, item) => {
      const index = round * 10 + item;
      return index % 10 === 9 ? transfer(server, id, '@world', 5, { inflight: true }) : transfer(server, '@world', id, 100 + index);
    }));
    if (round === 3) await server.request('POST', `/${id}/metadata`, { meta_data: { tier: 'platinum' } });
  }
  const events: LedgerEvent[] = [...server.runtime.log.read(1)].map((logged) => logged.event);
  const times = [...new Set(events.map((event) => event.at))];
  t.ok(times.length < events.length, 'some events share a millisecond');

  await t.test('at every moment the index answers what the fold gives', async (t) => {
    let checked = 0;
    for (const at of [times[0]! - 1, ...times, times[times.length - 1]! + 1]) {
      const expected = foldBalance(id, events, at);
      const response = await server.request('GET', `/balances/${id}/at?timestamp=${encodeURIComponent(new Date(at).toISOString())}`);
      if (!expected) {
        if (response.status !== 404) t.fail(`at ${at}: ${response.status}, but the balance did not exist`);
        continue;
      }
      checked += 1;
      if (response.status !== 200 || toJsonText(response.body.balance) !== toJsonText(balanceView(expected)) || response.body.from_source !== false) {
        t.fail(`at ${at}: ${JSON.stringify(response.body)} is not the fold's ${toJsonText(balanceView(expected))}`);
      }
    }
    t.ok(checked > 10, `${checked} moments answered from the index as the fold answers them`);
    const future = await server.request('GET', `/balances/${id}/at?timestamp=2999-01-01T00:00:00Z`);
    t.equal(future.status, 200);
    t.same(future.body.balance, (await server.request('GET', `/balances/${id}`)).body, 'in the future: the balance now');
    expectError(t, await server.request('GET', `/balances/${id}/at?timestamp=2000-01-01T00:00:00Z`), 404, 'BAL_NOT_FOUND', 'before it existed');
  });

  await t.test('history: every change once, oldest first, across pages', async (t) => {
    const whole = await allPages(server, `/balances/${id}/history?limit=7`);
    t.equal(whole.changes.length, 61, 'its creation and sixty transfers');
    t.equal(whole.pages, Math.ceil(61 / 7));
    t.same(whole.changes.map((change) => change.version), Array.from({ length: 61 }, (_, index) => index), 'one change per version');
    const last = whole.changes[whole.changes.length - 1]!;
    const now = (await server.request('GET', `/balances/${id}`)).body;
    for (const field of ['balance', 'credit_balance', 'debit_balance', 'inflight_balance', 'inflight_credit_balance', 'inflight_debit_balance', 'available_balance']) {
      t.equal(String(last[field]), String(now[field]), `the last change's ${field} is the balance now`);
    }
    const first = whole.changes[0]!;
    t.same(first, { ...first, version: 0, balance: 0, credit_balance: 0, debit_balance: 0 }, 'the first change is its creation, all zero');
    const defaults = await server.request('GET', `/balances/${id}/history`);
    t.equal(defaults.body.changes.length, 61, 'default limit 100');
    t.equal(defaults.body.next_cursor, null);
    t.equal(defaults.body.currency, 'USD');
    t.equal(defaults.body.balance_id, id);

    const middle = whole.changes[30]!.at as string;
    const later = whole.changes[45]!.at as string;
    const window = await allPages(server, `/balances/${id}/history?from=${encodeURIComponent(middle)}&to=${encodeURIComponent(later)}&limit=4`);
    // Times are compared as instants: written as Go writes them, their text does not sort.
    const at = (change: Record<string, unknown>): number => Date.parse(change.at as string);
    const expected = whole.changes.filter((change) => at(change) >= Date.parse(middle) && at(change) <= Date.parse(later));
    t.same(window.changes, expected, 'a window holds exactly the changes inside it (bounds included)');
  });

  await t.test('refusals', async (t) => {
    expectError(t, await server.request('GET', '/balances/bln_missing/history'), 404, 'BAL_NOT_FOUND', 'unknown balance');
    expectError(t, await server.request('GET', `/balances/${id}/history?from=yesterday`), 400, 'BAL_INVALID_TIMESTAMP', 'bad from');
    expectError(t, await server.request('GET', `/balances/${id}/history?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`), 400, 'BAL_INVALID_TIMESTAMP', 'from after to');
    expectError(t, await server.request('GET', `/balances/${id}/history?limit=0`), 400, 'GEN_VALIDATION_ERROR', 'limit 0');
    expectError(t, await server.request('GET', `/balances/${id}/history?limit=${HISTORY_LIMIT_MAX + 1}`), 400, 'GEN_VALIDATION_ERROR', 'limit over the maximum');
    expectError(t, await server.request('GET', `/balances/${id}/history?cursor=not-a-cursor`), 400, 'GEN_VALIDATION_ERROR', 'a cursor we did not give');
    expectError(t, await server.request('GET', `/balances/${id}/history?cursor=${'x'.repeat(500)}`), 400, 'GEN_VALIDATION_ERROR', 'an over-long cursor');
  });
});

t.test('amounts past 2^53 and below zero come back exact from the history', async (t) => {
  const server = await openServer(t);
  const balance = await createBalance(server);
  const id = balance.balance_id as string;
  const huge = '1000000000000000000000000000007';
  const first = await server.request('POST', '/transactions', {
    description: 'test', currency: 'USD', source: '@world', destination: id, precise_amount: huge, allow_overdraft: true, skip_queue: true,
  });
  t.equal(first.status, 201);
  await transfer(server, id, '@world', 0, { precise_amount: '9007199254740993' }); // past the largest safe integer
  await transfer(server, id, '@world', 10, { inflight: true });
  const events: LedgerEvent[] = [...server.runtime.log.read(1)].map((logged) => logged.event);
  const history = await allPages(server, `/balances/${id}/history`);
  t.equal(history.changes.length, 4);
  const now = (await server.request('GET', `/balances/${id}`)).body;
  const last = history.changes[3]!;
  for (const field of ['balance', 'credit_balance', 'debit_balance', 'inflight_debit_balance', 'available_balance']) {
    t.equal(String(last[field]), String(now[field]), `${field} ${String(now[field])}`);
  }
  const world = (await server.request('GET', '/balances/indicator/@world/currency/USD')).body;
  const worldHistory = await allPages(server, `/balances/${world.balance_id}/history`);
  t.equal(String(worldHistory.changes.at(-1)!.balance), String(world.balance), `@world below zero: ${String(world.balance)}`);
  for (const change of history.changes) {
    const expected = foldBalance(id, events, Date.parse(change.at as string));
    const response = await server.request('GET', `/balances/${id}/at?timestamp=${encodeURIComponent(change.at as string)}`);
    if (toJsonText(response.body.balance) !== toJsonText(balanceView(expected!))) t.fail(`at ${change.at as string}: ${JSON.stringify(response.body)}`);
  }
});

t.test('without the index, /at folds the log and history is not served', async (t) => {
  const server = await openServer(t, { index: false });
  const balance = await createBalance(server);
  await transfer(server, '@world', balance.balance_id as string, 42);
  const now = await server.request('GET', `/balances/${balance.balance_id}/at`);
  t.equal(now.status, 200);
  t.equal(now.body.from_source, true, 'folded from the log');
  t.equal(String(now.body.balance.balance), '42');
  expectError(t, await server.request('GET', `/balances/${balance.balance_id}/history`), 404, 'GEN_NOT_FOUND', 'no history without the index');
});

t.test('a balance id longer than any the ledger makes is answered as unknown, not with an error', async (t) => {
  // Found by the fuzzer (seed 1310139285, case 3694): LMDB refuses keys past about 2 KB.
  const server = await openServer(t);
  const long = 'x'.repeat(5_000);
  expectError(t, await server.request('GET', `/balances/${long}/at?timestamp=2026-01-01T00:00:00Z`), 404, 'BAL_NOT_FOUND', '/at');
  expectError(t, await server.request('GET', `/balances/${long}/history`), 404, 'BAL_NOT_FOUND', '/history');
});
