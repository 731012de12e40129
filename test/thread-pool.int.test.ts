// `folio serve` sizes libuv's thread pool (app/node-flags.ts THREAD_POOL_SIZE) unless the operator did:
// LMDB's write transactions and SQLite's statements share that pool, and with Node's default of four
// the log's commits queued behind the index's statements. Counted on a real served process, by the
// names of its threads (Linux: /proc/<pid>/task/*/comm), after a write has used LMDB and the index.

import fs from 'node:fs';
import t, { type Test } from 'tap';
import { THREAD_POOL_SIZE } from '../app/node-flags.js';
import { startChildServer } from './helpers/child-server.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

const PROC = '/proc';

function poolThreads(pid: number): number {
  const tasks = fs.readdirSync(`${PROC}/${pid}/task`);
  return tasks.filter((task) => {
    try {
      return fs.readFileSync(`${PROC}/${pid}/task/${task}/comm`, 'utf8').trim() === 'libuv-worker';
    } catch {
      return false; // the thread ended meanwhile
    }
  }).length;
}

async function threadsOfServer(t: Test, env: Record<string, string>): Promise<number> {
  const dataDir = tempDataDir('thread-pool');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChildServer(dataDir, env);
  t.teardown(() => server.terminate());
  const written = await sendRequest(server.url, 'POST', '/transactions', {
    description: 'test', source: '@world', destination: '@pool', precise_amount: 1, currency: 'USD', allow_overdraft: true, skip_queue: true,
  });
  t.equal(written.status, 201, 'a write went through');
  return poolThreads(server.process.pid as number);
}

const skip = fs.existsSync(`${PROC}/self/task`) ? false : 'needs /proc (Linux)';

t.test('a served process runs libuv\'s pool with THREAD_POOL_SIZE threads', { skip }, async (t) => {
  const { UV_THREADPOOL_SIZE: _unset, ...env } = process.env;
  process.env = env; // the child inherits this process's environment: without the operator's setting
  t.teardown(() => {
    process.env = { ...env, ...(_unset === undefined ? {} : { UV_THREADPOOL_SIZE: _unset }) };
  });
  t.equal(await threadsOfServer(t, {}), THREAD_POOL_SIZE);
});

t.test('an operator\'s UV_THREADPOOL_SIZE is kept', { skip }, async (t) => {
  t.equal(await threadsOfServer(t, { UV_THREADPOOL_SIZE: '6' }), 6);
});
