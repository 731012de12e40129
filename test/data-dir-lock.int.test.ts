// One server per data directory, with a lock the kernel drops when its holder dies (runtime/data-dir-lock.ts).
// The built CLI is started under a parent that never reaps its children (`exec sleep`, as PID 1 is in a
// container without an init): killed with SIGKILL, the server stays a zombie and `kill(pid, 0)` keeps
// succeeding on it, which kept the pid-file lock held for good. The next start must work, with every
// acknowledged write there. A second live server on the same directory is still refused, by name.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { DataDirLockedError, LOCK_FILE } from '../runtime/data-dir-lock.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { startChildServer } from './helpers/child-server.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/bin/folio.js');

interface OrphanedServer {
  url: string;
  /** The server's pid, a child of the non-reaping parent. */
  pid: number;
  /** The parent's pid; it leads its own process group, the server's group too. */
  parentPid: number;
  exited: Promise<unknown>;
}

/** `folio serve` as the child of a shell that became `sleep`: nothing ever waits for the server. */
async function serveUnderNonReapingParent(dataDir: string): Promise<OrphanedServer> {
  const parent = spawn('sh', ['-c', `"$0" "$1" serve & echo "server pid $!"; exec sleep 600`, process.execPath, CLI], {
    env: { ...process.env, FOLIO_PORT: '0', FOLIO_HOST: '127.0.0.1', FOLIO_DATA_DIR: dataDir, FOLIO_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise((resolve) => parent.on('exit', resolve));
  let output = '';
  parent.stderr?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 30_000);
    parent.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const pid = /server pid (\d+)/.exec(output)?.[1];
      const url = /listening on (http:\/\/[0-9.]+:\d+)/.exec(output)?.[1];
      if (pid && url) {
        clearTimeout(timer);
        resolve({ url, pid: Number(pid), parentPid: parent.pid as number, exited });
      }
    });
  });
}

/** The process state letter from /proc (Z: zombie), or undefined once the pid is gone. */
function processState(pid: number): string | undefined {
  try {
    return /^State:\s+(\S)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.test('a server killed with SIGKILL that stays a zombie does not keep its directory', async (t) => {
  const dataDir = tempDataDir('folio-lock-zombie');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const first = await serveUnderNonReapingParent(dataDir);
  t.teardown(async () => {
    try {
      process.kill(-first.parentPid, 'SIGKILL');
    } catch {
      // already gone
    }
    await first.exited;
  });
  const ledger = await sendRequest(first.url, 'POST', '/ledgers', { name: 'before the crash' });
  t.equal(ledger.status, 201);
  process.kill(first.pid, 'SIGKILL');
  await until(() => processState(first.pid) === 'Z', 'the killed server is a zombie');
  t.doesNotThrow(() => process.kill(first.pid, 0), 'kill(pid, 0) still succeeds on the zombie, as a pid file would read it');

  const second = await startChildServer(dataDir);
  t.teardown(() => second.terminate());
  t.pass('the next start on the same directory works');
  const found = await sendRequest(second.url, 'GET', `/ledgers/${ledger.body.ledger_id}`);
  t.equal(found.status, 200, 'with the acknowledged write there');
  t.equal(found.body.name, 'before the crash');
});

t.test('the issue\'s way: the server and its parent killed together with SIGKILL to their process group', async (t) => {
  const dataDir = tempDataDir('folio-lock-group');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const first = await serveUnderNonReapingParent(dataDir);
  process.kill(-first.parentPid, 'SIGKILL');
  await first.exited;
  // The orphan goes to PID 1 (or a subreaper); where that never reaps, it stays a zombie.
  await until(() => processState(first.pid) !== 'R' && processState(first.pid) !== 'S', 'the server is dead');
  t.comment(`the killed server is ${processState(first.pid) === 'Z' ? 'a zombie nobody reaps' : 'gone'}`);
  const second = await startChildServer(dataDir);
  t.teardown(() => second.terminate());
  t.equal((await sendRequest(second.url, 'GET', '/health')).status, 200, 'the next start works');
});

t.test('a second live server on the same directory is refused, naming the directory', async (t) => {
  const dataDir = tempDataDir('folio-lock-live');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const first = await startChildServer(dataDir);
  const refused = await startChildServer(dataDir).then(
    (server) => {
      void server.kill();
      return undefined;
    },
    (error: Error) => error.message,
  );
  t.match(refused, /server exited \(1\) before listening/, 'the second server exits with 1');
  t.match(refused, `data directory ${dataDir} is in use by another server (process ${first.process.pid})`);
  t.equal((await sendRequest(first.url, 'POST', '/ledgers', { name: 'still serving' })).status, 201, 'the first one is untouched and keeps serving');
  t.equal(await first.terminate(), 0);
  const again = await startChildServer(dataDir);
  t.pass('once it stopped, the directory opens again');
  await again.terminate();
});

t.test('in one process too, and a pid file left by an older version means nothing', async (t) => {
  const dataDir = tempDataDir('folio-lock-process');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // The old lock file naming a live process (this one) refused every start.
  fs.writeFileSync(path.join(dataDir, 'LOCK'), `${process.pid}\n`);
  const first = await LedgerRuntime.open({ dataDir, index: false });
  t.notOk(fs.existsSync(path.join(dataDir, 'LOCK')), 'the old pid file is removed once the lock is held');
  t.ok(fs.existsSync(path.join(dataDir, LOCK_FILE)));
  await t.rejects(LedgerRuntime.open({ dataDir, index: false }), DataDirLockedError, 'a second runtime in the same process is refused');
  await first.close();
  const second = await LedgerRuntime.open({ dataDir, index: false });
  t.pass('and opens once the first has closed');
  await second.close();
});
