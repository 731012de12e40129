// The engine host switching the ledger it serves, as a replicated node's does on a rejoin
// (workers/engine-host.ts, workers/remote-ledger.ts), over a real channel and real ledgers in temp dirs: while it
// refuses, every call is answered 503 REPL_REJOINING with Retry-After; a call under way is waited for
// (bounded); a write's wait for its seq is tied to the ledger that appended it (answered from what that
// ledger made durable, refused once it has stopped short, never left waiting), and what the worker has
// seen appended goes back with a new ledger whose log is shorter. While writes are held, commands are
// refused on the engine's side and a worker's API key stamps hold.

import fs from 'node:fs';
import { MessageChannel } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { NodeRefusal } from '../http/ports/node-refusal.js';
import { EngineHost } from '../workers/engine-host.js';
import { SharedSeqs } from '../workers/engine-channel.js';
import { EngineClient, holdWhileWritesHeld } from '../workers/remote-ledger.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { notLeader } from '../replication/record-replicator.js';
import type { Outcome } from '../engine/ledger-engine.js';
import { tempDataDir } from './helpers/test-server.js';

const REJOINING = new NodeRefusal('REPL_REJOINING');
const silent = { error: () => undefined };

async function openLedger(t: Test): Promise<LedgerRuntime> {
  const dataDir = tempDataDir('engine-switch');
  const runtime = await LedgerRuntime.open({ dataDir, index: false });
  t.teardown(async () => {
    await runtime.close().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return runtime;
}

/** The next state the client hears of. */
function nextState(client: EngineClient): Promise<void> {
  return new Promise((resolve) => {
    let first = true;
    client.onState(() => {
      if (first) resolve();
      first = false;
    });
  });
}

async function createLedger(client: EngineClient, name: string): Promise<number> {
  const outcome = await client.run<Outcome<unknown>>([{ op: 'ledger.create', name, meta_data: {} }]);
  if (!outcome.ok) throw new Error(`refused: ${JSON.stringify(outcome.rejection)}`);
  return outcome.seq;
}

/** An engine host that starts refusing (a replicated node joining) and a worker's client on a channel to it. */
async function hostAndClient(t: Test): Promise<{ engine: EngineHost; client: EngineClient }> {
  const engine = new EngineHost({ logger: silent, refusal: REJOINING });
  t.teardown(() => engine.close());
  const channel = new MessageChannel();
  engine.attach(channel.port1);
  const client = new EngineClient(channel.port2, SharedSeqs.over(engine.seqsBuffer));
  await client.ready;
  return { engine, client };
}

t.test('an engine host that changes its ledger', async (t) => {
  const first = await openLedger(t);
  const second = await openLedger(t);
  const third = await openLedger(t);
  const { engine, client } = await hostAndClient(t);

  const refused = await client.call('view', 'queuedCount', []).catch((error: unknown) => error);
  t.ok(refused instanceof NodeRefusal, 'before any ledger is served, a call is refused');
  t.match(refused, { code: 'REPL_REJOINING' }, 'as the node rejoining (503 with Retry-After at the edge)');
  t.ok(client.state.refusal, 'and the state says every request is refused');

  engine.serve({ runtime: first });
  await nextState(client);
  let seq = 0;
  for (let index = 0; index < 20; index += 1) seq = await createLedger(client, `first ${index}`);
  await client.durable(seq);
  t.equal(client.visibleSeq(), first.log.appendedSeq, 'the worker sees what the first ledger appended');
  const wrote = first.log.appendedSeq;

  // A write answered by the first ledger, its wait made after the ledger was replaced: answered from
  // what the first ledger made durable, whatever the second reaches.
  const late = await createLedger(client, 'the last on the first');
  await first.log.flush();
  // A call under way when the ledger is refused (a leader stepping down, its log stopped: a seq past its
  // end may yet come from the group, so it is waited for): the host waits for it.
  first.log.stopAppending(notLeader());
  const underWay = client.call('core', 'appliedSeqReached', [first.log.appendedSeq + 1_000, 300]);
  // Calls of one channel are carried out in order: once this one is answered, the one before is under way.
  await client.call('view', 'queuedCount', []);
  engine.refuse(REJOINING);
  await nextState(client);
  const drained = await engine.drain(5_000);
  t.equal(drained, true, 'drain waits for the call under way');
  t.match(await underWay, { outcome: 'timed_out' }, 'which finished on the ledger it started on');
  t.match(await client.call('view', 'queuedCount', []).catch((error: unknown) => error), { code: 'REPL_REJOINING' }, 'while refusing, every call is refused');

  engine.serve({ runtime: second });
  await nextState(client);
  t.ok(second.log.appendedSeq < wrote, `the second ledger's log is shorter (${second.log.appendedSeq} < ${wrote})`);
  t.equal(client.visibleSeq(), second.log.appendedSeq, 'what the worker has seen appended goes back with it');
  await client.durable(late);
  t.pass('the first ledger\'s write is answered from what it made durable');

  // A write on the second ledger whose wait begins, then the ledger stops appending (a leader stepping
  // down): the wait is refused, as on the engine's thread, not left waiting for a seq that will not come.
  const pending = client.durable(second.log.appendedSeq + 1_000);
  const stopped = nextState(client);
  second.log.stopAppending(notLeader());
  await stopped;
  t.match(await pending.catch((error: unknown) => error), { name: 'NodeRefusal', code: 'REPL_NOT_LEADER' }, 'a wait past where the stopped log got is refused REPL_NOT_LEADER');
  t.match(await client.durable(second.log.appendedSeq + 500).catch((error: unknown) => error), { code: 'REPL_NOT_LEADER' }, 'and so is a new one');

  // A wait of a ledger replaced before it got there is refused when it is replaced.
  engine.serve({ runtime: third });
  await nextState(client);
  const orphan = client.durable(third.log.appendedSeq + 1_000);
  engine.refuse(REJOINING);
  t.match(await orphan.catch((error: unknown) => error), { name: 'NodeRefusal', code: 'REPL_REJOINING' }, 'a wait on a ledger that is replaced is refused with what replaced it (503 at the edge)');
});

t.test('while writes are held, commands are refused on the engine side and a worker\'s own stamps hold', async (t) => {
  const runtime = await openLedger(t);
  const { engine, client } = await hostAndClient(t);
  const writer = { held: false, hold() { this.held = true; }, release() { this.held = false; } };
  holdWhileWritesHeld(client, writer);
  // Held before the ledger is served, as on a rejoin: the node held writes as it stepped down (replication-node.ts).
  engine.holdWrites(true);
  engine.serve({ runtime });
  await nextState(client);
  t.equal(writer.held, true, 'the worker\'s stamps hold');
  t.match(await createLedger(client, 'held').catch((error: unknown) => error), { name: 'NodeRefusal', code: 'REPL_NO_LEADER' }, 'a command reaching the engine is refused REPL_NO_LEADER (503 at the edge)');
  engine.holdWrites(false);
  await nextState(client);
  t.equal(writer.held, false, 'released');
  t.ok(await createLedger(client, 'released') > 0, 'and commands are carried out again');
});
