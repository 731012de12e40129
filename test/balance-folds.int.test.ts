// Balances folded from the log (`from_source`, `/at`) run in chunks off the request path and are
// bounded (issue 13: a fold of a long history used to hold the event loop, stalling every other
// request). Checked by order, not by time: a request sent after a long fold started is answered first.

import t from 'tap';
import { transferCommand } from '../engine/commands.js';
import { DEFAULT_BALANCE_FOLD_LIMITS } from '../runtime/balance-folds.js';
import { startTestServer } from './helpers/test-server.js';

const EVENTS = 30_000;

t.test('a long fold does not hold other requests, and folds beyond the bound are refused', async (t) => {
  const server = await startTestServer({ index: false });
  t.teardown(() => server.stop());
  const { engine } = server.runtime;
  for (let index = 0; index < EVENTS; index += 1) {
    const outcome = engine.run({ op: 'transaction.create', ...transferCommand({
      description: 'test', source: '@fold-world', destination: '@fold-a', precise_amount: 1n, currency: 'USD', allow_overdraft: true, skip_queue: true,
    }) });
    if (!outcome.ok) throw new Error(outcome.rejection.message);
  }
  await server.runtime.durable(server.runtime.log.appendedSeq);
  const balance = engine.state.balanceByIndicator('@fold-a', 'USD');
  t.ok(balance);
  const id = balance?.balance_id as string;

  const order: string[] = [];
  const fold = server.request('GET', `/balances/${id}?from_source=true`).then((response) => {
    order.push('fold');
    return response;
  });
  await new Promise((resolve) => setTimeout(resolve, 5)); // the fold has started
  const health = server.request('GET', '/health').then((response) => {
    order.push('health');
    return response;
  });
  const [folded, healthy] = await Promise.all([fold, health]);
  t.equal(healthy.status, 200);
  t.equal(folded.status, 200);
  t.equal(Number(folded.body.balance.balance), EVENTS, 'the fold gives the balance');
  t.same(order, ['health', 'fold'], 'the health check was answered while the fold ran');

  const burst = DEFAULT_BALANCE_FOLD_LIMITS.concurrent_max + DEFAULT_BALANCE_FOLD_LIMITS.waiting_max + 10;
  const answers = await Promise.all(Array.from({ length: burst }, (_, index) =>
    server.request('GET', index % 2 === 0 ? `/balances/${id}?from_source=true` : `/balances/${id}/at`)));
  const refused = answers.filter((response) => response.status === 503);
  const served = answers.filter((response) => response.status === 200);
  t.equal(served.length + refused.length, burst, 'every answer is a 200 or a 503');
  t.ok(refused.length > 0, `folds beyond the bound are refused (${refused.length} of ${burst})`);
  t.ok(served.length >= DEFAULT_BALANCE_FOLD_LIMITS.concurrent_max + DEFAULT_BALANCE_FOLD_LIMITS.waiting_max, 'the bound itself is served');
  for (const response of refused) {
    t.equal(response.body.error_detail.code, 'QUEUE_BACKPRESSURE');
    t.equal(response.headers['retry-after'], '1');
  }
  t.ok(served.every((response) => Number(response.body.balance.balance) === EVENTS), 'served folds are right');
});
