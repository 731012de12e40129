// The nemesis's full disk where no size-capped disk can be made (wal/injected-disk-full.ts): with test hooks
// on and FOLIO_TEST_DISK_FULL_FILE present, the log's next write fails with ENOSPC, so the real server goes
// down the path a full disk sends it: the write is not acknowledged, the process stops with exit 70 and
// its log's failure logged, and once the "disk" is freed it starts on the same data directory with every
// acknowledged write and none of the refused one. Without test hooks the file is never looked at.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startChildServer } from './helpers/child-server.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

/** A hang guard, not a timing check. */
const EXIT_PATIENCE_MS = 60_000;

function transfer(reference: string): Record<string, unknown> {
  return { source: '@world', destination: '@shelf', precise_amount: 100, currency: 'USD', precision: 100, allow_overdraft: true, skip_queue: true, reference, description: 'disk' };
}

async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${EXIT_PATIENCE_MS} ms`)), EXIT_PATIENCE_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

t.test('a full disk injected at the log stops the node without acknowledging; it restarts with what was acknowledged', async (t) => {
  const dataDir = tempDataDir('folio-disk-full');
  const diskFull = path.join(tempDataDir('folio-disk-full-flag'), 'full');
  const env = { FOLIO_TEST_HOOKS: '1', FOLIO_TEST_DISK_FULL_FILE: diskFull };
  const server = await startChildServer(dataDir, env);
  t.teardown(() => server.process.kill('SIGKILL'));
  const before = await sendRequest(server.url, 'POST', '/transactions', transfer('before-full'));
  t.equal(before.status, 201, 'a write before the disk fills is acknowledged');

  fs.writeFileSync(diskFull, '');
  // The flag is looked for every 50 ms: writes sent until then may still land, and each is acknowledged.
  let refused: { reference: string; status: number | string } | undefined;
  const acknowledged: string[] = ['before-full'];
  for (let attempt = 0; attempt < 200 && !refused; attempt += 1) {
    const reference = `while-full-${attempt}`;
    const answer = await sendRequest(server.url, 'POST', '/transactions', transfer(reference)).catch((error: Error) => ({ status: `no answer (${error.message})` as number | string }));
    if (answer.status === 201) acknowledged.push(reference);
    else refused = { reference, status: answer.status };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.ok(refused, `a write on the full disk was not acknowledged (${refused?.status})`);
  const code = await within(server.exited, 'the stop on a full disk');
  t.equal(code, 70, 'the node stops with exit 70');
  t.match(server.stderr(), /write-ahead log failed/, 'and says its log failed');
  t.match(server.stderr(), /ENOSPC/, 'naming the full disk');

  fs.rmSync(diskFull);
  const again = await startChildServer(dataDir, env);
  t.teardown(() => again.process.kill('SIGKILL'));
  for (const reference of acknowledged) {
    const found = await sendRequest(again.url, 'GET', `/transactions/reference/${reference}`);
    t.equal(found.status, 200, `acknowledged ${reference} is there after the restart`);
  }
  const missing = await sendRequest(again.url, 'GET', `/transactions/reference/${refused!.reference}`);
  t.equal(missing.status, 404, 'the write the full disk refused is not');
  const after = await sendRequest(again.url, 'POST', '/transactions', transfer('after-free'));
  t.equal(after.status, 201, 'and the freed node takes writes again');
  await again.terminate();
});

t.test('without test hooks the file is never looked at', async (t) => {
  const dataDir = tempDataDir('folio-disk-full-off');
  const diskFull = path.join(tempDataDir('folio-disk-full-off-flag'), 'full');
  fs.writeFileSync(diskFull, '');
  const server = await startChildServer(dataDir, { FOLIO_TEST_DISK_FULL_FILE: diskFull });
  t.teardown(() => server.process.kill('SIGKILL'));
  const answer = await sendRequest(server.url, 'POST', '/transactions', transfer('hooks-off'));
  t.equal(answer.status, 201, 'writes go on as the flag is ignored');
  t.notMatch(server.stderr(), /test hooks on/, 'and the node does not warn of test hooks');
  await server.terminate();
});
