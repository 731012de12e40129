import t from 'tap';
import { startTestServer } from './helpers/test-server.js';

t.test('a transfer between two internal balances', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const created = await server.request('POST', '/transactions', {
    description: 'test', amount: 12.5, precision: 100, currency: 'USD', source: '@world', destination: '@alice',
    allow_overdraft: true, skip_queue: true,
  });
  t.equal(created.status, 201);
  t.equal(created.body.status, 'APPLIED');
  t.equal(created.body.precise_amount, 1250);
  const alice = await server.request('GET', '/balances/indicator/@alice/currency/USD');
  t.equal(alice.body.balance, 1250);
});
