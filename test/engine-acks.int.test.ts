// A write's acknowledgement in a worker waits for its seq to be durable, and learns it from the seqs the
// engine's thread shares in memory (workers/engine-channel.ts SharedSeqs), not from a state message per group
// commit: writes one after another are each acknowledged as soon as their commit is durable, while state
// messages go out only on change and every 100 ms. Fails where a worker learns durability from messages:
// there every commit sent one.

import fs from 'node:fs';
import { MessageChannel } from 'node:worker_threads';
import t from 'tap';
import { SharedSeqs } from '../workers/engine-channel.js';
import { EngineHost } from '../workers/engine-host.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { EngineClient } from '../workers/remote-ledger.js';
import type { Outcome } from '../engine/ledger-engine.js';
import { tempDataDir } from './helpers/test-server.js';

const WRITES = 100;

t.test('writes one after another are acknowledged from the shared seqs, not a state message each', async (t) => {
  const dataDir = tempDataDir('engine-acks');
  const runtime = await LedgerRuntime.open({ dataDir, index: false });
  const engine = new EngineHost({ runtime, logger: { error: () => undefined } });
  const channel = new MessageChannel();
  engine.attach(channel.port1);
  const client = new EngineClient(channel.port2, SharedSeqs.over(engine.seqsBuffer));
  t.teardown(async () => {
    engine.close();
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  await client.ready;
  let states = 0;
  client.onState(() => {
    states += 1;
  });
  const started = performance.now();
  for (let write = 0; write < WRITES; write += 1) {
    const outcome = await client.run<Outcome<unknown>>([{ op: 'ledger.create', name: `ledger ${write}`, meta_data: {} }]);
    if (!outcome.ok) throw new Error(JSON.stringify(outcome.rejection));
    await client.durable(outcome.seq);
    t.ok(runtime.log.durableSeq >= outcome.seq, `write ${write} was durable when acknowledged`);
  }
  const elapsedMs = performance.now() - started;
  t.comment(`${WRITES} writes in ${elapsedMs.toFixed(0)} ms, ${states} state messages`);
  // One state every 100 ms (and on a change of admission) at most: far fewer than the writes' commits.
  t.ok(states <= Math.ceil(elapsedMs / 100) + 5, `state messages (${states}) follow the clock, not the ${WRITES} commits`);
  t.ok(states < WRITES, 'fewer state messages than commits');
});
