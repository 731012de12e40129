// Fencing and standbys, with real nodes and a real PostgreSQL:
//   - a leader cut off from PostgreSQL by a TCP relay that stops forwarding acknowledges nothing sent to it
//     after the cut (every such write is answered 503, none hangs), a standby takes the next term, and when
//     the relay delivers what it held (the old leader's late INSERTs among it) nothing of the old term lands
//     after the new term began; the old leader rejoins as a standby, drops the records it sealed that the
//     group never committed, and ends with the new leader's state hash;
//   - a standby SIGKILLed under load and started again catches up to the leader's seq and state hash;
//   - on a standby: writes answered 307 to the leader, reads served, X-Folio-Seq refused when malformed and
//     when past the end of the group's log (409); `folio replication status` shows the lease and every node;
//     a leader deposed by a term taken in the database steps down, and with no leader known every write
//     is answered 503 REPL_NO_LEADER while reads go on.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { termsInLog } from '../replication/postgres/postgres-log-store.js';
import { auditLedger, call, GroupWriter, quietSeq, stateHashes, type Transfer } from './helpers/replication-client.js';
import { TcpRelay } from '../bench/replication/tcp-relay.js';

let references = 0;
function transfer(source: string, destination: string, amount: number): Transfer {
  references += 1;
  return {
    description: 'test', source, destination, currency: 'USD', precise_amount: BigInt(amount), reference: `partition-${process.pid}-${references}`,
    allow_overdraft: true, skip_queue: true,
  };
}

const CLI = fileURLToPath(new URL('../dist/bin/folio.js', import.meta.url));

function runStatus(url: string, json: boolean): string {
  const run = spawnSync(process.execPath, [CLI, 'replication', 'status', ...(json ? ['--json'] : [])], {
    env: { ...process.env, FOLIO_REPLICATION_URL: url }, encoding: 'utf8', timeout: 30_000,
  });
  if (run.status !== 0) throw new Error(`folio replication status exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}

async function replicationStatus(url: string): Promise<any> {
  return JSON.parse(runStatus(url, true));
}

async function replicationStatusText(url: string): Promise<string> {
  return runStatus(url, false);
}

async function withDatabase<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

t.test('a leader cut off from PostgreSQL acknowledges nothing after its lease and cannot append when the link returns', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'repl-partition', startAll: false });
  t.teardown(() => group.stop());
  const relay = await TcpRelay.start({ host: group.postgres.connection.host, port: group.postgres.connection.port });
  t.teardown(() => relay.close());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  a.postgresUrl = relay.urlFor(group.postgres.url);
  await group.startNode(a);
  t.equal(await group.waitForLeader(60_000), a, 'the node behind the relay leads');
  await group.startNode(b);
  await group.waitForStandby(b, 60_000);

  const writer = new GroupWriter(group);
  for (let index = 0; index < 30; index += 1) await writer.transfer(transfer('@world', `@p${index % 3}`, 100 + index));
  t.equal(writer.acknowledged.length, 30, 'writes acknowledged before the cut');

  relay.pause();
  const cutAt = performance.now();
  const intoThePartition = await Promise.all(Array.from({ length: 8 }, async (_, index) => {
    const sent = transfer('@p0', '@p1', 7 + index);
    try {
      const answer = await call(a.url as string, 'POST', '/transactions', sent);
      return { sent, status: answer.status, code: answer.body?.error_detail?.code as string | undefined, after_ms: performance.now() - cutAt };
    } catch (error) {
      return { sent, status: 0, code: (error as Error).message, after_ms: performance.now() - cutAt };
    }
  }));
  t.same(intoThePartition.filter((answer) => answer.status !== 503), [], 'every write sent to the cut-off leader is answered 503, none acknowledged');
  t.ok(intoThePartition.every((answer) => answer.code === 'REPL_NOT_LEADER' || answer.code === 'REPL_REJOINING'), `refused as not committed: ${[...new Set(intoThePartition.map((answer) => answer.code))].join(', ')}`);
  t.comment(`answered within ${Math.round(Math.max(...intoThePartition.map((answer) => answer.after_ms)))} ms of the cut`);

  t.equal(await group.waitForLeader(60_000, a), b, 'the standby takes over');
  const health = await group.health(b);
  t.ok(health && health.term >= 2, `with a later term (${health?.term})`);

  // The link comes back before the new leader has appended anything: the old leader's INSERTs held in
  // the relay reach PostgreSQL now, right after the log's last record, and only the term check can
  // refuse them.
  relay.resume();
  const rejoined = await group.waitForStandby(a, 60_000);
  t.equal(rejoined.leader?.name, b.name, 'the old leader rejoins as a standby of the new one');
  const dropped = /"records_dropped":(\d+)/.exec(a.stderr);
  t.ok(dropped && Number(dropped[1]) > 0, `it dropped the records it had sealed that the group never committed (${dropped?.[1]})`);
  for (let index = 0; index < 20; index += 1) await writer.transfer(transfer(`@p${index % 3}`, '@world', 10 + index));

  const terms = await withDatabase(group.postgres.url, (client) => termsInLog(client));
  const ordered = terms.every((range, index) => index === 0 || (range.term > terms[index - 1]!.term && range.first_seq === terms[index - 1]!.last_seq + 1));
  t.ok(ordered, `each term's records follow the last term's, none of an old term after a new one began: ${JSON.stringify(terms)}`);

  const leader = await group.waitForLeader(10_000);
  t.same(await auditLedger(leader.url as string, writer.acknowledged), [], 'every acknowledged write is there once; balances add up');
  const references = new Set((await call(leader.url as string, 'GET', '/transactions?limit=100')).body.map((transaction: any) => transaction.reference));
  t.same(intoThePartition.filter((answer) => references.has(answer.sent.reference)).map((answer) => answer.sent.reference), [], 'no write sent into the partition was ever applied');
  const seq = await quietSeq(group, leader);
  const hashes = await stateHashes(group, seq);
  t.equal(new Set(hashes.values()).size, 1, `both nodes have the same state hash at seq ${seq}: ${JSON.stringify([...hashes])}`);
});

t.test('a standby killed under load catches up when started again; writes to a standby are redirected; no leader, no writes', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'repl-standby' });
  t.teardown(() => group.stop());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  await group.waitForStandby(b, 60_000);
  const writer = new GroupWriter(group);
  let stopping = false;
  const load = Array.from({ length: 3 }, async (_, client) => {
    for (let index = 0; !stopping; index += 1) await writer.transfer(transfer('@world', `@s${client}`, 1 + index));
  });
  const acknowledgedAtLeast = (count: number) => group.waitFor(`${count} acknowledged`, 60_000, async () => (writer.acknowledged.length >= count ? true : undefined));
  await acknowledgedAtLeast(50);
  await group.kill(b);
  await acknowledgedAtLeast(writer.acknowledged.length + 100);
  await group.startNode(b);
  await group.waitForStandby(b, 60_000);
  await acknowledgedAtLeast(writer.acknowledged.length + 50);
  stopping = true;
  await Promise.all(load);
  const seq = await quietSeq(group, a);
  const hashes = await stateHashes(group, seq);
  t.equal(new Set(hashes.values()).size, 1, `the restarted standby reaches seq ${seq} with the leader's state hash`);
  t.same(await auditLedger(b.url as string, writer.acknowledged), [], 'and serves every acknowledged write');

  // A write sent to the standby is redirected, with its path and query, to the leader.
  const redirected = await call(b.url as string, 'POST', '/ledgers?x=1', { name: 'via standby' });
  t.equal(redirected.status, 307, 'a write to a standby is answered 307');
  t.equal(redirected.headers.get('location'), `${a.url}/ledgers?x=1`, 'to the same path on the leader');
  const created = await call(a.url as string, 'POST', '/ledgers', { name: 'read your writes' });
  t.equal(created.status, 201);
  const writtenAt = created.headers.get('x-folio-seq');
  t.match(writtenAt, /^\d+$/, 'a write answers with its seq');
  const readBack = await call(b.url as string, 'GET', `/ledgers/${created.body.ledger_id}`, undefined, { 'X-Folio-Seq': writtenAt as string });
  t.equal(readBack.status, 200, 'a standby read with that seq sees the write');
  t.equal((await call(b.url as string, 'GET', '/balances', undefined, { 'X-Folio-Seq': '12x' })).body.error_detail.code, 'REPL_SEQ_INVALID', 'a malformed X-Folio-Seq is refused');
  const ahead = await call(b.url as string, 'GET', '/balances', undefined, { 'X-Folio-Seq': String(seq + 1_000_000) });
  t.equal(ahead.status, 409, 'a seq past the end of the group\'s log is refused once a read of it finds so');
  t.equal(ahead.body.error_detail.code, 'REPL_SEQ_BEYOND_LOG');

  // The operator's view: `folio replication status` reads the group from PostgreSQL.
  await group.waitFor('both nodes reported at the log\'s end', 30_000, async () => {
    const status = await replicationStatus(group.postgres.url);
    return status.nodes.length === 2 && status.nodes.every((node: any) => node.behind_events === 0) ? status : undefined;
  });
  const status = await replicationStatus(group.postgres.url);
  t.equal(status.lease.holder, a.name, 'status: the lease is held by the leader');
  t.ok(status.lease.expires_in_ms > 0, 'and live');
  t.same(status.nodes.map((node: any) => [node.name, node.role, node.behind_events, node.silent]), [[a.name, 'leader', 0, false], [b.name, 'standby', 0, false]], 'status: every node, its role, none behind');
  t.match(await replicationStatusText(group.postgres.url), /held by node-a .* log ends at seq \d+\n\nnode\s+role/, 'and as a table');

  // A term taken in the database by a holder nobody can reach: the leader is deposed at its next renewal.
  await withDatabase(group.postgres.url, (client) => client.query(
    "UPDATE folio_lease SET term = term + 1, holder = 'elsewhere', holder_name = 'elsewhere', holder_url = '', expires_at = clock_timestamp() + interval '1 hour' WHERE id = 1"));
  // Deposed, it says so at once, then rejoins as a standby (refusing everything meanwhile, 503
  // REPL_REJOINING): wait until it serves again.
  await group.waitFor('the leader deposed and serving again as a standby', 30_000, async () => (
    (await group.health(a))?.role === 'standby' && (await call(a.url as string, 'GET', '/balances')).status === 200 ? true : undefined));
  for (const node of [a, b]) {
    const refused = await call(node.url as string, 'POST', '/ledgers', { name: 'nobody leads' });
    t.equal(refused.status, 503, `${node.name}: a write with no leader known is answered 503`);
    t.equal(refused.body.error_detail.code, 'REPL_NO_LEADER');
    t.equal(refused.headers.get('retry-after'), '1');
    t.equal((await call(node.url as string, 'GET', '/balances')).status, 200, `${node.name}: reads go on`);
  }
});
