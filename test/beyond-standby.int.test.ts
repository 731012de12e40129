// Issue 41's writes replayed on a standby: a replicated group of two real `folio serve` nodes on one
// PostgreSQL. The leader takes an exchange between currencies (a transfer, and a hold committed in two
// parts then refunded), a transfer with preconditions, a bulk hold action with preconditions, a closed
// period and an API key with a rate limit; the standby, which only ever copies the group's log, must show
// the same transactions, the same balances (the exchange balances included), the same period and the
// same key, and the two nodes' state hashes must be equal at the same seq.

import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { call, quietSeq, stateHashes } from './helpers/replication-client.js';

t.test('exchanges, preconditions, periods and rate-limited keys replay on a standby', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'beyond-standby' });
  t.teardown(() => group.stop());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  await group.waitForStandby(b, 60_000);
  const leader = a.url as string;
  const standby = b.url as string;

  const created = async (route: string, body: unknown, status = 201): Promise<any> => {
    const answer = await call(leader, 'POST', route, body);
    t.equal(answer.status, status, `${route}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    return answer.body;
  };
  const dollars = (await created('/balances', { ledger_id: 'general_ledger_id', currency: 'USD' })).balance_id as string;
  const euros = (await created('/balances', { ledger_id: 'general_ledger_id', currency: 'EUR' })).balance_id as string;
  await created('/transactions', {
    source: '@world', destination: dollars, precise_amount: 1_000_000, precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true, description: 'fund',
  });
  const exchange = {
    source: dollars, destination: euros, precise_amount: 1000, precision: 100, currency: 'USD', rate: '0.9217', destination_currency: 'EUR',
    destination_precision: 100, rounding: 'half_even', skip_queue: true, description: 'fx',
  };
  const transfer = await created('/transactions', exchange);
  const hold = await created('/transactions', { ...exchange, precise_amount: 2500, inflight: true, reference: 'fx-hold' });
  const part = await call(leader, 'PUT', `/transactions/inflight/${hold.transaction_id}`, { status: 'commit', precise_amount: 1000, skip_queue: true });
  t.equal(part.status, 200, JSON.stringify(part.body).slice(0, 300));
  const rest = await call(leader, 'PUT', `/transactions/inflight/${hold.transaction_id}`, { status: 'commit', skip_queue: true });
  t.equal(rest.status, 200, JSON.stringify(rest.body).slice(0, 300));
  const refund = await created('/refund-transaction/' + transfer.transaction_id, { skip_queue: true }, 201);
  const conditioned = await created('/transactions', {
    source: dollars, destination: '@shop', precise_amount: 100, precision: 100, currency: 'USD', skip_queue: true, description: 'conditioned',
    preconditions: [{ balance_id: dollars, field: 'balance', operator: '>=', precise_value: 0 }],
  });
  const refused = await call(leader, 'POST', '/transactions', {
    source: dollars, destination: '@shop', precise_amount: 100, precision: 100, currency: 'USD', skip_queue: true, description: 'refused',
    preconditions: [{ balance_id: dollars, field: 'balance', operator: '>=', precise_value: 100_000_000 }],
  });
  t.equal(refused.status, 409, 'a failed precondition is refused on the leader');
  const bulkHold = await created('/transactions', { source: dollars, destination: '@shop', precise_amount: 300, precision: 100, currency: 'USD', inflight: true, skip_queue: true, description: 'bulk hold' });
  const bulk = await call(leader, 'POST', '/transactions/inflight/bulk/commit', {
    skip_queue: true, transactions: [{ transaction_id: bulkHold.transaction_id, preconditions: [{ balance_id: dollars, field: 'balance', operator: '>=', precise_value: 0 }] }],
  });
  t.equal(bulk.status, 200, JSON.stringify(bulk.body).slice(0, 300));
  const period = await created('/ledgers/general_ledger_id/periods', { closes_at: new Date(Date.now() - 60_000).toISOString() });
  const key = await created('/api-keys', { name: 'limited', owner: 'beyond', scopes: ['transactions:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString(), rate_limit: { requests_per_second: 5, burst: 10 } });

  const seq = await quietSeq(group, a);
  const atSeq = { 'X-Folio-Seq': String(seq) };
  for (const id of [transfer.transaction_id, hold.transaction_id, refund.transaction_id, conditioned.transaction_id, bulkHold.transaction_id]) {
    const onLeader = await call(leader, 'GET', `/transactions/${id}`);
    const onStandby = await call(standby, 'GET', `/transactions/${id}`, undefined, atSeq);
    t.equal(onStandby.status, 200, `transaction ${id} is on the standby`);
    t.same(onStandby.body, onLeader.body, `and the same as on the leader (${onLeader.body.status}${onLeader.body.rate ? `, rate ${onLeader.body.rate}` : ''})`);
  }
  const exchangeBalance = async (url: string, currency: string): Promise<any> =>
    (await call(url, 'GET', `/balances/indicator/${encodeURIComponent(`@exchange_${currency}`)}/currency/${currency}`, undefined, atSeq)).body;
  for (const currency of ['USD', 'EUR']) {
    const onLeader = await exchangeBalance(leader, currency);
    t.ok(onLeader.balance_id, `@exchange_${currency} exists on the leader`);
    t.same(await exchangeBalance(standby, currency), onLeader, `@exchange_${currency} is the same on the standby`);
  }
  for (const id of [dollars, euros]) {
    t.same((await call(standby, 'GET', `/balances/${id}`, undefined, atSeq)).body, (await call(leader, 'GET', `/balances/${id}`)).body, `balance ${id} is the same on the standby`);
  }
  const periods = await call(standby, 'GET', '/ledgers/general_ledger_id/periods', undefined, atSeq);
  t.match(periods.body, [{ period_id: period.period_id, sealed_seq: period.sealed_seq, sealed_hash: period.sealed_hash }], 'the closed period is on the standby');
  const keys = await call(standby, 'GET', '/api-keys?owner=beyond', undefined, atSeq);
  const shown = (Array.isArray(keys.body) ? keys.body : keys.body.api_keys ?? keys.body.data ?? []) as any[];
  t.match(shown.find((candidate) => candidate.api_key_id === key.api_key_id), { rate_limit: { requests_per_second: 5, burst: 10 } }, 'the key and its rate limit are on the standby');

  const hashes = await stateHashes(group, seq);
  t.equal(new Set(hashes.values()).size, 1, `both nodes have the same state hash at seq ${seq}: ${JSON.stringify([...hashes])}`);
});
