// A replicated node serves HTTP on worker threads, as a single node does (docs/decisions-threads.md):
// real `folio serve` nodes on a real PostgreSQL, each with two HTTP workers. The leader's requests are
// carried by its `folio-http-N` threads (their CPU time, read from /proc, grows with the requests). Then a
// write load runs while the leader is deposed in the database (a term taken by a holder that lets it run
// out): the leader steps down and rejoins in the same process, the other node takes over, the load goes
// on. No acknowledged write is lost or applied twice, every answer other than a success or a redirect is
// one of the documented 503s (never a 500 or a hang), to reads of the deposed leader too, a change-feed
// stream open on it ends, and the same process comes back serving on its workers.

import pg from 'pg';
import t from 'tap';
import { MAIN_THREAD_NAME, threadCpuMicros } from '../bench/process-cpu.js';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { auditLedger, call, GroupWriter, quietSeq, stateHashes, type Transfer } from './helpers/replication-client.js';

/** What a node answers while it cannot serve a request: no leader, not leading any more, rejoining (docs/decisions-replication.md). */
const DOCUMENTED_503 = new Set(['REPL_NOT_LEADER', 'REPL_REJOINING', 'REPL_NO_LEADER']);
const WORKERS = 2;

let references = 0;
function transfer(destination: string, amount: number): Transfer {
  references += 1;
  return {
    description: 'test', source: '@world', destination, currency: 'USD', precise_amount: BigInt(amount), reference: `workers-${process.pid}-${references}`,
    allow_overdraft: true, skip_queue: true,
  };
}

/** CPU time of the node's HTTP worker threads, by name (none: HTTP runs on the main thread). */
function httpThreads(node: GroupNode): Map<string, number> {
  const threads = threadCpuMicros(node.child?.process.pid as number);
  return new Map([...threads].filter(([name]) => name.startsWith('folio-http-')));
}

t.test('a replicated node serves on worker threads, and rejoins under load through them losing nothing', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'repl-workers', env: { FOLIO_WORKERS: String(WORKERS) } });
  t.teardown(() => group.stop());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  await group.waitForStandby(b, 60_000);

  // The leader's HTTP is on its workers: two threads of that name, doing the work of the requests.
  const before = httpThreads(a);
  t.same([...before.keys()].sort(), ['folio-http-0', 'folio-http-1'], `the leader runs ${WORKERS} HTTP worker threads beside ${MAIN_THREAD_NAME}`);
  const writer = new GroupWriter(group, 90_000);
  for (let index = 0; index < 40; index += 1) await writer.transfer(transfer(`@w${index % 3}`, 1 + index));
  const reads = new Map<number, number>();
  for (let index = 0; index < 200; index += 1) {
    const { status } = await call(a.url as string, 'GET', '/balances?limit=50');
    reads.set(status, (reads.get(status) ?? 0) + 1);
  }
  t.same([...reads], [[200, 200]], 'every read answered 200');
  const after = httpThreads(a);
  const spent = [...after].reduce((sum, [name, micros]) => sum + micros - (before.get(name) ?? 0), 0);
  t.ok(spent > 0, `the workers spent ${Math.round(spent / 1000)} ms of CPU on 240 requests`);
  t.equal((await group.health(a))?.role, 'leader', 'GET /health on a worker says the node leads');
  t.equal((await group.health(b))?.leader?.name, a.name, 'and the standby names it');

  // A change-feed stream on the leader: it must end when the leader rejoins.
  const stream = await fetch(`${a.url}/events`, { headers: { Accept: 'text/event-stream' } });
  t.equal(stream.status, 200, 'a change stream opens on the leader');
  const streamEnded = (async () => {
    const reader = stream.body!.getReader();
    try {
      for (;;) if ((await reader.read()).done) return true;
    } catch {
      return true;
    }
  })();

  let stopping = false;
  const load = Array.from({ length: 4 }, async (_, client) => {
    for (let index = 0; !stopping; index += 1) await writer.transfer(transfer(`@c${client}`, 1 + index));
  });
  // Readers on the node that is deposed, throughout: a 200, or a documented 503 while it rejoins.
  const readAnswers = new Map<string, number>();
  const readers = Array.from({ length: 2 }, async (_, reader) => {
    while (!stopping) {
      let key: string;
      try {
        const answer = await call(a.url as string, 'GET', reader === 0 ? '/balances?limit=20' : '/transactions?limit=5');
        key = answer.status === 200 ? '200' : `${answer.status} ${answer.body?.error_detail?.code}`;
      } catch (error) {
        key = `no answer: ${(error as Error).message}`;
      }
      readAnswers.set(key, (readAnswers.get(key) ?? 0) + 1);
    }
  });
  const acknowledgedAtLeast = (count: number) => group.waitFor(`${count} acknowledged`, 90_000, async () => (writer.acknowledged.length >= count ? true : undefined));
  await acknowledgedAtLeast(writer.acknowledged.length + 60);

  // Deposed in the database: a term nobody holds, running out in two seconds. The leader learns it at its
  // next renewal and rejoins as a standby in the same process; then a node takes the next term.
  const pid = a.child?.process.pid;
  const client = new pg.Client({ connectionString: group.postgres.url });
  await client.connect();
  try {
    await client.query("UPDATE folio_lease SET term = term + 1, holder = 'elsewhere', holder_name = 'elsewhere', holder_url = '', expires_at = clock_timestamp() + interval '2 seconds' WHERE id = 1");
  } finally {
    await client.end();
  }
  await group.waitFor(`${a.name} stepped down`, 30_000, async () => (/stepping down/.test(a.stderr) ? true : undefined));
  t.ok(await Promise.race([streamEnded, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000))]), 'the change stream on the deposed leader ended');
  const successor = await group.waitForLeader(60_000);
  await acknowledgedAtLeast(writer.acknowledged.length + 60);
  stopping = true;
  await Promise.all([...load, ...readers]);

  t.equal(a.child?.process.pid, pid, `${a.name} rejoined in the same process`);
  t.ok(group.isRunning(a) && group.isRunning(b), 'both nodes run');
  t.match(a.stderr, /stepping down; rejoining the group as a standby/, `${a.name} stepped down to rejoin`);
  t.same(writer.refused, [], 'no write was refused');
  t.same([...writer.statuses.keys()].filter((status) => status >= 500 && status !== 503), [], `no 5xx but 503 (answers ${JSON.stringify([...writer.statuses])})`);
  t.same([...writer.unavailable.keys()].filter((code) => !DOCUMENTED_503.has(code)), [], `every 503 is a documented one: ${JSON.stringify([...writer.unavailable])}`);
  t.ok(writer.unavailable.size > 0 || writer.statuses.has(307), 'the load met the rejoin (503s or redirects)');
  t.same([...readAnswers.keys()].filter((key) => key !== '200' && !(key.startsWith('503 ') && DOCUMENTED_503.has(key.slice(4)))), [], `every read of ${a.name} answered 200 or a documented 503: ${JSON.stringify([...readAnswers])}`);
  t.same(await auditLedger(successor.url as string, writer.acknowledged), [], `all ${writer.acknowledged.length} acknowledged writes are there once each; balances add up`);
  const seq = await quietSeq(group, successor);
  const hashes = await stateHashes(group, seq);
  t.equal(new Set(hashes.values()).size, 1, `both nodes have the same state hash at seq ${seq}`);

  // The rejoined process serves on its workers again: its /health from them, its standby reads too.
  const health = await group.health(a);
  t.ok(health?.role === 'leader' || health?.leader !== undefined, `${a.name} answers /health as ${health?.role}`);
  const last = writer.acknowledged.at(-1)!;
  const read = await call(a.url as string, 'GET', `/transactions/${last.transaction_id}`, undefined, { 'X-Folio-Seq': String(last.seq) });
  t.equal(read.status, 200, `${a.name} reads the last acknowledged write with its X-Folio-Seq`);
  t.same([...httpThreads(a).keys()].sort(), ['folio-http-0', 'folio-http-1'], 'on the same worker threads');
});
