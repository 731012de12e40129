// The kill test: a replicated group of three real `folio serve` processes on one PostgreSQL, a steady
// load of synchronous transfers (each with a reference, resent with it until a definite answer, as a
// careful client does), and the leader SIGKILLed at seeded random points, several times, each killed
// leader started again on its data directory (it rejoins as a standby, dropping whatever it had sealed
// that the group never committed). Afterwards: every acknowledged transfer is on the leader with the id
// it was acknowledged with, no reference is recorded twice (nothing applied twice), every balance equals
// its transfers, every currency sums to zero, and every node has the same state hash at the same seq.
// Waits are for conditions, bounded; nothing is timed. A failure names its seed (FOLIO_SEED replays).

import t from 'tap';
import { ReplicatedGroup } from '../bench/replication/replicated-group.js';
import { SeededRandom, testSeeds } from './helpers/deterministic.js';
import { auditLedger, GroupWriter, quietSeq, stateHashes, type Transfer } from './helpers/replication-client.js';

const NODES = 3;
const KILLS = 3;
const CLIENTS = 6;
const MEMBERS = ['@m0', '@m1', '@m2', '@m3', '@m4'];
const CURRENCIES = ['USD', 'EUR'];

function transferFor(rng: SeededRandom, reference: string): Transfer {
  const source = rng.chance(0.3) ? '@world' : rng.pick(MEMBERS);
  const destination = rng.pick(MEMBERS.filter((name) => name !== source));
  return {
    description: 'test', source, destination, currency: rng.pick(CURRENCIES), precise_amount: BigInt(rng.between(1, 50_000)), reference,
    allow_overdraft: true, skip_queue: true,
  };
}

for (const seed of testSeeds([30_001]).slice(0, 2)) {
  t.test(`leaders SIGKILLed under load lose no acknowledged write (seed ${seed})`, async (t) => {
    const rng = new SeededRandom(seed);
    const group = await ReplicatedGroup.start({ nodes: NODES, label: 'repl-kill' });
    t.teardown(() => group.stop());
    const writer = new GroupWriter(group, 90_000);
    let stopping = false;
    let sent = 0;
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      const clientRng = new SeededRandom(seed * 31 + client);
      while (!stopping) {
        sent += 1;
        await writer.transfer(transferFor(clientRng, `kill-${seed}-${client}-${sent}`));
      }
    });
    const acknowledgedAtLeast = (count: number) => group.waitFor(`${count} acknowledged writes`, 120_000, async () => (writer.acknowledged.length >= count ? true : undefined));

    const kills: Array<{ killed: string; successor: string; acknowledgedBefore: number }> = [];
    for (let kill = 0; kill < KILLS; kill += 1) {
      // A random point in the load: after between 20 and 120 more acknowledged writes.
      await acknowledgedAtLeast(writer.acknowledged.length + rng.between(20, 120));
      const leader = await group.waitForLeader(60_000);
      const acknowledgedBefore = writer.acknowledged.length;
      await group.kill(leader);
      const successor = await group.waitForLeader(60_000, leader);
      kills.push({ killed: leader.name, successor: successor.name, acknowledgedBefore });
      // Writes flow through the new leader before the old one comes back as a standby.
      await acknowledgedAtLeast(writer.acknowledged.length + 10);
      await group.startNode(leader);
      await group.waitForStandby(leader, 60_000);
    }
    await acknowledgedAtLeast(writer.acknowledged.length + 20);
    stopping = true;
    await Promise.all(clients);
    t.comment(`kills: ${JSON.stringify(kills)}; ${writer.acknowledged.length} acknowledged, ${writer.resends} resends, answers ${JSON.stringify([...writer.statuses])}`);
    t.same(writer.refused, [], 'no transfer was refused (every one may overdraw)');

    const leader = await group.waitForLeader(60_000);
    const problems = await auditLedger(leader.url as string, writer.acknowledged);
    t.same(problems.slice(0, 10), [], `the leader holds all ${writer.acknowledged.length} acknowledged transfers once each; balances and currencies add up`);

    const seq = await quietSeq(group, leader);
    const hashes = await stateHashes(group, seq);
    t.equal(hashes.size, NODES, 'every node answers');
    t.equal(new Set(hashes.values()).size, 1, `every node has the same state hash at seq ${seq}: ${JSON.stringify([...hashes])}`);

    // A standby serves what the leader acknowledged, once it has applied its seq (read-your-writes).
    const standby = group.nodes.find((node) => node !== leader && group.isRunning(node))!;
    const last = writer.acknowledged.at(-1)!;
    const read = await fetch(`${standby.url}/transactions/${last.transaction_id}`, { headers: { 'X-Folio-Seq': String(last.seq) } });
    t.equal(read.status, 200, 'a standby reads the last acknowledged transfer with its X-Folio-Seq');
    const dropped = group.nodes.map((node) => /"records_dropped":(\d+)/g.exec(node.stderr)?.[1]).filter((count) => count !== undefined);
    t.comment(`rejoins that dropped records the group never committed: ${dropped.length ? dropped.join(', ') : 'none this run'}`);
  });
}
