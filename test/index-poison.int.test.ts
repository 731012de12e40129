// A projector thread that keeps dying on the same event (as one did when a single event outgrew its
// heap) is restarted with growing pauses, and after POISON_ATTEMPTS deaths the event is reported: in
// GET /search/reindex, in /metrics and in the log, instead of a restart loop every second for ever.

import t from 'tap';
import { POISON_ATTEMPTS } from '../index/projector.js';
import { startTestServer } from './helpers/test-server.js';

t.test('a projector thread dying again and again at one event is reported as a poison event', async (t) => {
  const errors: string[] = [];
  const server = await startTestServer({ onIndexError: (error) => errors.push(error.message) });
  t.teardown(() => server.stop());
  const created = await server.request('POST', '/transactions', {
    description: 'test', precise_amount: 5, currency: 'USD', source: '@poison-a', destination: '@poison-b', allow_overdraft: true, skip_queue: true,
  });
  t.equal(created.status, 201);
  await server.request('POST', '/transactions/filter', { filters: [] }); // the index's rows have caught up
  const index = server.runtime.query as unknown as { projector: { checkpoint: number; worker: { terminate(): Promise<number> } } };
  const stuckAt = index.projector.checkpoint;
  // And its full-text indexes, which follow the rows on a track of their own: the thread is idle when it
  // is first ended. node-sqlite3 aborts the whole process when a thread ends while one of its queries is
  // answering (TryGhost/node-sqlite3#1666), which is no part of what this test is about.
  for (let wait = 0; wait < 200; wait += 1) {
    if ((await server.request('GET', '/search/reindex')).body.index_text_checkpoint_seq >= stuckAt) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (let death = 1; death <= POISON_ATTEMPTS; death += 1) {
    // Stands in for a thread ending on its own (out of memory) while it works on the next event; the
    // restarted threads end before they are even ready, which counts the same.
    const worker = index.projector.worker;
    await worker.terminate();
    if (death < POISON_ATTEMPTS) {
      for (let wait = 0; wait < 200 && index.projector.worker === worker; wait += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      t.not(index.projector.worker, worker, `restarted after death ${death}`);
    }
  }
  for (let wait = 0; wait < 100 && !errors.some((message) => message.includes('stuck at')); wait += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  const status = await server.request('GET', '/search/reindex');
  t.equal(status.status, 200);
  t.match(status.body.index_poison, { seq: stuckAt + 1, attempts: POISON_ATTEMPTS }, 'GET /search/reindex names the event');
  t.match(status.body.index_poison.message, /ended 3 times in a row/);
  const metrics = await server.request('GET', '/metrics');
  t.match(metrics.text, new RegExp(`folio_index_poison_seq ${stuckAt + 1}`), 'and /metrics');
  t.ok(errors.some((message) => message.includes(`stuck at log seq ${stuckAt + 1}`)), 'and the log');
  t.ok(errors.filter((message) => message.includes('restarting')).length <= POISON_ATTEMPTS, 'restarts were not a loop');
});
