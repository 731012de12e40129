// Requests for a snapshot now (POST /admin/snapshots) wait for one at or past their seq, but not without
// bound: the long fuzz run held 36 of them past a minute while jobs ran one after another. Past the wait
// a request gets SnapshotError with retryAfterSeconds (503 SNAPSHOT_UNAVAILABLE with Retry-After over
// HTTP), and the job it waited for still finishes.

import t from 'tap';
import { SnapshotError, SnapshotService } from '../runtime/snapshot-service.js';
import { startTestServer } from './helpers/test-server.js';

t.test('a snapshot request waits a bounded time, then is told to ask again', async (t) => {
  const server = await startTestServer({ index: false });
  for (let index = 0; index < 50; index += 1) {
    const response = await server.request('POST', '/transactions', {
      description: 'test', currency: 'USD', precise_amount: 100 + index, precision: 100, source: '@world', destination: `@c${index % 5}`, allow_overdraft: true, skip_queue: true,
    });
    t.equal(response.status, 201, 'a transfer', { diagnostic: false });
  }
  const durableSeq = server.runtime.log.durableSeq;
  await server.stop();

  const service = SnapshotService.start({
    dataDir: server.dataDir, schedule: { every_events: 0, every_seconds: 0, keep: 2 }, durableSeq, requestWaitMs: 1,
  });
  t.teardown(() => service.stop());
  const refused = await service.snapshotNow(durableSeq).then(() => undefined, (error: unknown) => error);
  t.type(refused, SnapshotError, 'a request that cannot be served within its wait is refused');
  t.equal((refused as SnapshotError).retryAfterSeconds, 5, 'and told when to ask again');
  // The job it waited for goes on; it must end before another service writes in the same directory.
  await service.stop();

  const patient = SnapshotService.start({ dataDir: server.dataDir, schedule: { every_events: 0, every_seconds: 0, keep: 2 }, durableSeq });
  t.teardown(() => patient.stop());
  const info = await patient.snapshotNow(durableSeq);
  t.equal(info.seq, durableSeq, 'with the default wait the snapshot is written and answered');
});
