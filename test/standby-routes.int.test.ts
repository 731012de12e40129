// What a standby decides from the route, not from the text of the path, on a replicated group of two real
// `folio serve` nodes on one PostgreSQL (http/middleware/route-effects.ts, http/middleware/leader-redirect.ts,
// http/middleware/read-your-writes.ts):
//   - a POST to a write route whose path ends in /filter (a refund of the transaction `filter`) is sent to
//     the leader, 307, as every write is; the old code took the path for a filter and carried it out on
//     the standby. A POST that only reads (/ledgers/filter) is served by the standby itself.
//   - a write sent in absolute form (`POST http://evil.example/ledgers`) is sent to the leader's origin
//     and the request's path and query; the old code glued the whole request target to the leader's URL
//     (`http://127.0.0.1:PORThttp://evil.example/ledgers`).
//   - X-Folio-Seq past the end of the group's log is refused within a read of it, 409 REPL_SEQ_BEYOND_LOG
//     saying where the log ends, where the old code held the request 5 s and answered 503; a seq the
//     group has is waited for and served.
//   - a transaction's log position (GET /transactions/:id/log-position) is read on the standby and equals
//     the leader's: the standby's log is a byte-for-byte copy of the group's.

import net from 'node:net';
import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { splitResponses } from './helpers/raw-http.js';
import { call } from './helpers/replication-client.js';

/** One raw request on a connection of its own; the first answer. */
function rawAnswer(url: string, text: string): Promise<ReturnType<typeof splitResponses>[number] | undefined> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    let received = '';
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(text));
    socket.setEncoding('latin1');
    const timer = setTimeout(() => socket.destroy(), 30_000);
    socket.on('data', (chunk: string) => {
      received += chunk;
      const [answer] = splitResponses(received);
      if (answer) {
        clearTimeout(timer);
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(splitResponses(received)[0]);
    });
  });
}

t.test('a standby decides by the route that matched', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'standby-routes' });
  t.teardown(() => group.stop());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  await group.waitForStandby(b, 60_000);
  const leader = a.url as string;
  const standby = b.url as string;

  const refund = await call(standby, 'POST', '/refund-transaction/filter', { skip_queue: true });
  t.equal(refund.status, 307, 'a refund of the transaction `filter` sent to a standby is a write: 307');
  t.equal(refund.headers.get('location'), `${leader}/refund-transaction/filter`, 'to the same path on the leader');
  const filtered = await call(standby, 'POST', '/ledgers/filter', { filters: [] });
  t.equal(filtered.status, 200, 'a filter is read on the standby itself');

  const { port } = new URL(standby);
  const body = '{"name":"absolute"}';
  const absolute = await rawAnswer(standby, [
    'POST http://evil.example/ledgers?x=1 HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Connection: close', '', body,
  ].join('\r\n'));
  t.equal(absolute?.status, 307, 'a write in absolute form: 307');
  t.equal(absolute?.headers.location, `${leader}/ledgers?x=1`, 'to the leader\'s origin, with the request\'s path and query only');

  const created = await call(leader, 'POST', '/ledgers', { name: 'read your writes' });
  t.equal(created.status, 201);
  const writtenAt = created.headers.get('x-folio-seq') as string;
  const readBack = await call(standby, 'GET', `/ledgers/${created.body.ledger_id}`, undefined, { 'X-Folio-Seq': writtenAt });
  t.equal(readBack.status, 200, 'a read on the standby with the write\'s seq sees the write');

  // A transaction's position in the log's checksum chain, read on the standby from its own copy of the log.
  const moved = await call(leader, 'POST', '/transactions', {
    source: '@world', destination: '@standby-reader', precise_amount: 100, precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true, description: 'log position',
  });
  t.equal(moved.status, 201);
  const positionRoute = `/transactions/${moved.body.transaction_id}/log-position`;
  const onLeader = await call(leader, 'GET', positionRoute);
  const onStandby = await call(standby, 'GET', positionRoute, undefined, { 'X-Folio-Seq': moved.headers.get('x-folio-seq') as string });
  t.equal(onStandby.status, 200, 'the standby answers a transaction\'s log position');
  t.same(onStandby.body, onLeader.body, 'as the leader does: the same record, seq and checksums');
  t.match(onStandby.body.record_checksum, /^[0-9a-f]{64}$/);

  const started = performance.now();
  const ahead = await call(standby, 'GET', '/balances', undefined, { 'X-Folio-Seq': String(Number(writtenAt) + 1_000_000) });
  const ms = performance.now() - started;
  t.equal(ahead.status, 409, 'a seq past the end of the group\'s log: 409');
  t.equal(ahead.body.error_detail.code, 'REPL_SEQ_BEYOND_LOG');
  t.ok(ahead.body.error_detail.details.log_end_seq >= Number(writtenAt), `saying where the group's log ends (${ahead.body.error_detail.details.log_end_seq})`);
  t.ok(ms < 4_000, `within a read of the group's log, not after the 5 s wait (${ms.toFixed(0)} ms)`);
  const health = await call(standby, 'GET', '/health', undefined, { 'X-Folio-Seq': String(Number(writtenAt) + 1_000_000) });
  t.equal(health.status, 200, '/health ignores X-Folio-Seq');
});
