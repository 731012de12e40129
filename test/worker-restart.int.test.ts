// An HTTP worker that dies is replaced (workers/http-workers.ts), and what it held is given back
// (workers/engine-host.ts detach): the old code ended the process when a worker failed after it started.
//   - on the engine's thread: a write whose fence count a gone worker started is uncounted, so a fence
//     completes at once instead of waiting out its bound and refusing; a gone worker's wait for a seq
//     ends, so a replicated host's drain does not wait for it;
//   - a worker thread terminated under a server is replaced on the same port: the server answers again
//     and takes writes, the failure is logged with its cause, and the body bytes the dead worker held are
//     given back;
//   - failures past the restart budget give up: the pool reports it (`folio serve` then exits 70).

import fs from 'node:fs';
import net from 'node:net';
import { MessageChannel } from 'node:worker_threads';
import pino from 'pino';
import t, { type Test } from 'tap';
import { CutoverControl, FENCE_WRITES_WAIT_MS_MAX } from '../cutover/cutover-control.js';
import { EngineHost } from '../workers/engine-host.js';
import { HttpWorkers, type RestartBudget } from '../workers/http-workers.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { SharedSeqs } from '../workers/engine-channel.js';
import { EngineClient } from '../workers/remote-ledger.js';
import { NodeRefusal } from '../http/ports/node-refusal.js';
import { DEFAULT_CONNECTION_LIMITS } from '../http/server/server-limits.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

const silent = { error: () => undefined };
const WAIT_MS_MAX = 30_000;

async function openLedger(t: Test, follower = false): Promise<LedgerRuntime> {
  const dataDir = tempDataDir('worker-restart');
  const runtime = await LedgerRuntime.open({ dataDir, index: false, follower });
  t.teardown(async () => {
    await runtime.close().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return runtime;
}

async function attached(engine: EngineHost): Promise<{ port: MessageChannel['port1']; client: EngineClient }> {
  const channel = new MessageChannel();
  engine.attach(channel.port1);
  const client = new EngineClient(channel.port2, SharedSeqs.over(engine.seqsBuffer));
  await client.ready;
  return { port: channel.port1, client };
}

async function eventually<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + WAIT_MS_MAX;
  for (;;) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS_MAX} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test('a gone worker\'s writes are uncounted from the fence', async (t) => {
  const runtime = await openLedger(t);
  const cutover = CutoverControl.forLeader(runtime);
  const engine = new EngineHost({ runtime, logger: silent, cutover });
  t.teardown(() => engine.close());
  const { port, client } = await attached(engine);
  const ticket = await client.call('cutover', 'writeStarted', []);
  t.ok(ticket, 'the worker started a write the fence counts');
  engine.detach(port);
  const started = performance.now();
  const fenced = await cutover.fence();
  const ms = performance.now() - started;
  t.ok(fenced.ok && fenced.value.seq >= 0, 'the fence completes');
  t.ok(ms < FENCE_WRITES_WAIT_MS_MAX / 2, `without waiting out its bound for the gone worker's write (${ms.toFixed(0)} ms; the bound is ${FENCE_WRITES_WAIT_MS_MAX} ms)`);
  await cutover.unfence();
});

t.test('a gone worker\'s wait for a seq ends, and a drain does not wait for it', async (t) => {
  const runtime = await openLedger(t, true);
  const rejoining = new NodeRefusal('REPL_REJOINING', 'rejoining');
  const engine = new EngineHost({ logger: silent, refusal: rejoining });
  t.teardown(() => engine.close());
  engine.serve({ runtime });
  const { port, client } = await attached(engine);
  void client.call('core', 'appliedSeqReached', [runtime.log.appendedSeq + 1_000, 60_000]).catch(() => undefined);
  // Calls of one channel are carried out in order: once this one is answered, the wait is under way.
  await client.call('view', 'queuedCount', []);
  t.equal(await engine.drain(50), false, 'the wait is under way');
  engine.detach(port);
  t.equal(await engine.drain(5_000), true, 'once its worker is gone the wait ends, and the drain with it');
});

/** A server on one HTTP worker, built as `folio serve` builds it, with a logger for the pool the test reads. */
async function pool(t: Test, restartBudget: RestartBudget, bodyBytesInFlightMax = 64 * 1024 * 1024): Promise<{
  url: string; workers: HttpWorkers; failures: Array<{ fields: Record<string, unknown>; message: string }>; gaveUp: () => Error | undefined;
}> {
  const runtime = await openLedger(t);
  const logger = pino({ level: 'silent' });
  const failures: Array<{ fields: Record<string, unknown>; message: string }> = [];
  let gaveUp: Error | undefined;
  const engine = new EngineHost({ runtime, logger });
  const workers = await HttpWorkers.start({
    count: 1, host: '127.0.0.1', port: 0, engine, restartBudget,
    logger: { error: (fields, message) => failures.push({ fields: fields as Record<string, unknown>, message }), info: () => undefined },
    onFailure: (error) => {
      gaveUp = error;
    },
    settings: {
      version: 'test', logLevel: 'silent', secretKey: '', bodyBytesInFlightMax, hookTargets: { allowPrivateNetworks: false },
      index: false, snapshots: false, cutover: false, inspector: false, replication: false, limits: DEFAULT_CONNECTION_LIMITS,
    },
  });
  t.teardown(async () => {
    await workers.close();
    engine.close();
  });
  return { url: `http://127.0.0.1:${workers.address.port}`, workers, failures, gaveUp: () => gaveUp };
}

t.test('a worker that dies is replaced on the same port, and gives back what it held', async (t) => {
  const cap = 2 * 1024 * 1024;
  const { url, workers, failures, gaveUp } = await pool(t, { restarts: 5, windowMs: 60_000 }, cap);
  t.equal((await sendRequest(url, 'POST', '/ledgers', { name: 'before' })).status, 201);

  // The worker holds 1.9 MB of a body in flight when it dies.
  const port = Number(new URL(url).port);
  const holder = net.connect(port, '127.0.0.1', () => holder.write(`POST /ledgers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1900000\r\n\r\n${' '.repeat(1_899_999)}`));
  holder.on('error', () => undefined);
  t.teardown(() => holder.destroy());
  const big = JSON.stringify({ name: 'big', meta_data: { text: 'x'.repeat(60_000) }, pad: ' '.repeat(300_000) });
  // Counted first, then probed: a probe sent before the holder's bytes arrive could take the room and
  // have the holder refused instead.
  await eventually('the holder\'s bytes in flight', async () => (workers.bodyBytesHeld >= 1_800_000 ? true : undefined));
  t.equal((await sendRequest(url, 'POST', '/ledgers', big)).status, 503, 'a body that does not fit beside the holder\'s is refused');

  const dead = workers.threads[0];
  await dead?.terminate();
  const answered = await eventually('an answer from the new worker', async () => {
    const health = await sendRequest(url, 'GET', '/health');
    return health.status === 200 ? health : undefined;
  });
  t.equal(answered.status, 200, 'the server answers again on the same port');
  t.not(workers.threads[0], dead, 'from a new worker thread');
  t.equal((await sendRequest(url, 'POST', '/ledgers', { name: 'after' })).status, 201, 'and takes writes');
  const after = await sendRequest(url, 'POST', '/ledgers', big);
  t.not(after.status, 503, `the dead worker's body bytes were given back (${after.status})`);
  t.equal(failures.length, 1, 'the failure was logged once');
  t.match(failures[0], { message: 'an HTTP worker failed; starting a new one in its place', fields: { worker: 0, err: { message: /HTTP worker 0 exited \(code 1\)/ } } }, 'with its cause');
  t.equal(gaveUp(), undefined, 'within the restart budget');
});

t.test('workers that keep failing past the restart budget are given up on', async (t) => {
  const { url, workers, failures, gaveUp } = await pool(t, { restarts: 2, windowMs: 60_000 });
  for (let failure = 1; failure <= 2; failure += 1) {
    const dead = workers.threads[0];
    await dead?.terminate();
    await eventually(`replacement ${failure}`, async () => (workers.threads[0] && workers.threads[0] !== dead && (await sendRequest(url, 'GET', '/health')).status === 200 ? true : undefined));
  }
  t.equal(failures.length, 2, 'two failures replaced');
  t.equal(gaveUp(), undefined);
  await workers.threads[0]?.terminate();
  await eventually('giving up', async () => gaveUp());
  t.match(gaveUp()?.message, /3 worker failures within 60000 ms, more than the 2 replacements allowed/, 'the third failure within the window gives up, saying why');
  t.equal(workers.threads[0], undefined, 'and starts no new worker');
});
