// A standby whose lease runs out while it catches up to take the lead (nemesis seed 5151), with real
// nodes and a real PostgreSQL: the standby is stopped (SIGSTOP) while the leader writes a backlog, the
// leader is killed, and the standby's link to PostgreSQL is cut the moment it takes the lease, while it
// still copies the backlog. The cut outlasts the lease, so the node steps down mid-catch-up; the step-down
// stops its log, and when the link returns the next copied record is refused for that. The node must
// take that for the step-down it is (replication/replication-node.ts promote), not for a record that
// cannot be applied: it rejoins, takes the lead again, and serves every acknowledged write. Before the
// fix it stopped for good (exit 78, "a record of the group's log could not be applied").

import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { TcpRelay } from '../bench/replication/tcp-relay.js';
import { call, GroupWriter, type Transfer } from './helpers/replication-client.js';

const LEASE_MS = 1_000;
/** Bulk requests in the backlog and transfers in each: about 16 reads of 256 records for the catch-up. */
const BACKLOG_REQUESTS = 4_000;
const ITEMS_PER_REQUEST = 20;
const CUT_MS = 4 * LEASE_MS;

function transfer(reference: string, destination: string, amount: number): Transfer {
  return { description: 'stall', source: '@world', destination, currency: 'USD', precise_amount: BigInt(amount), reference, allow_overdraft: true, skip_queue: true };
}

/** Resolves when the node writes a stderr line matching `pattern`, calling `then` at once, in the same turn. */
function onLine(node: GroupNode, pattern: RegExp, then: () => void): Promise<string> {
  return new Promise((resolve) => {
    let seen = '';
    const stream = node.child!.process.stderr!;
    const listen = (chunk: Buffer): void => {
      seen += chunk.toString();
      const line = seen.split('\n').find((candidate) => pattern.test(candidate));
      if (line === undefined) return;
      then();
      stream.off('data', listen);
      resolve(line);
    };
    stream.on('data', listen);
  });
}

t.test('a standby whose lease runs out while it catches up to take the lead rejoins and leads, nothing lost', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'repl-promotion-stall', startAll: false, leaseMs: LEASE_MS });
  t.teardown(() => group.stop());
  const relay = await TcpRelay.start({ host: group.postgres.connection.host, port: group.postgres.connection.port });
  t.teardown(() => relay.close());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  b.postgresUrl = relay.urlFor(group.postgres.url);
  b.env = { FOLIO_LOG_LEVEL: 'info' };
  await group.startNode(a);
  t.equal(await group.waitForLeader(60_000), a, 'node-a leads');
  await group.startNode(b);
  await group.waitForStandby(b, 60_000);

  const writer = new GroupWriter(group);
  for (let index = 0; index < 20; index += 1) await writer.transfer(transfer(`stall-${process.pid}-${index}`, `@r${index % 4}`, 100 + index));

  // The standby stops reading while the leader writes the backlog it will have to copy when it takes over.
  b.child!.process.kill('SIGSTOP');
  let groupEnd = 0;
  for (let request = 0; request < BACKLOG_REQUESTS; request += 1) {
    const items = Array.from({ length: ITEMS_PER_REQUEST }, (_, item) => transfer(`backlog-${process.pid}-${request}-${item}`, `@q${item % 8}`, 1 + item));
    const answer = await call(a.url as string, 'POST', '/transactions/bulk', { skip_queue: true, transactions: items });
    if (answer.status !== 201) throw new Error(`bulk ${request}: ${answer.status} ${JSON.stringify(answer.body)}`);
    groupEnd = Number(answer.headers.get('x-folio-seq'));
  }
  await group.kill(a);

  // The cut comes the moment the standby takes the lease, from inside the handler that reads the line.
  const took = onLine(b, /took the lease; taking the lead/, () => relay.pause());
  b.child!.process.kill('SIGCONT');
  const line = await took;
  const tookAtSeq = Number(/"seq":(\d+)/.exec(line)?.[1]);
  t.ok(tookAtSeq < groupEnd, `it took the lease at seq ${tookAtSeq}, with the group's log at ${groupEnd}: the catch-up was still to do`);
  await new Promise((resolve) => setTimeout(resolve, CUT_MS));
  relay.resume();

  const leader = await group.waitForLeader(60_000);
  t.equal(leader, b, 'node-b leads once the link is back');
  t.ok(group.isRunning(b), 'and never stopped');
  t.match(b.stderr, /the lease of term \d+ ran out before it could be renewed/, 'its lease ran out while it was cut off');
  t.match(b.stderr, /taking the lead stopped: this node stepped down meanwhile/, 'the catch-up was cut short by the step-down');
  t.notMatch(b.stderr, /cannot join its replication group; stopping/, 'which was not taken for a record that cannot be applied (exit 78)');

  // Checked without listing 80,000 transactions: each acknowledged transfer by its reference, and every
  // backlog item through the balances it credited (each @q balance's credit is a known sum).
  for (const { transfer: sent, transaction_id } of writer.acknowledged) {
    const found = await call(b.url as string, 'GET', `/transactions/reference/${sent.reference}`);
    t.equal(found.body?.transaction_id, transaction_id, `acknowledged ${sent.reference} is there as ${transaction_id}`);
  }
  const balances = (await call(b.url as string, 'GET', '/balances?limit=100')).body as Array<Record<string, any>>;
  for (let queue = 0; queue < 8; queue += 1) {
    let credited = 0n;
    for (let item = queue; item < ITEMS_PER_REQUEST; item += 8) credited += BigInt(BACKLOG_REQUESTS * (1 + item));
    const balance = balances.find((entry) => entry.indicator === `@q${queue}`);
    t.equal(BigInt(balance?.credit_balance ?? -1), credited, `@q${queue} was credited by every backlog item once`);
  }
  t.equal(balances.reduce((sum, balance) => sum + BigInt(balance.balance), 0n), 0n, 'USD sums to zero');
  const health = await group.health(b);
  t.ok((health?.applied_seq ?? 0) >= groupEnd, `it applied the whole backlog (seq ${health?.applied_seq} of ${groupEnd})`);
});
