// The bound on going down (threads/exit-watchdog.ts): a process whose exit is held by a thread stuck in a
// native call (here a worker blocked in a synchronous child process, which stopping the worker cannot
// interrupt) is killed once the bound has passed, instead of hanging; a process whose exit is not held
// ends with its own code.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const WATCHDOG = fileURLToPath(new URL('../dist/threads/exit-watchdog.js', import.meta.url));
/** The bound given to the child: short, so the test is quick; the stuck thread would hold it for minutes. */
const BOUND_MS = 1_000;

const child = (stuck: boolean): string => `
import { Worker } from 'node:worker_threads';
const { exitWithin } = await import(${JSON.stringify(WATCHDOG)});
if (${stuck}) {
  const code = "import { parentPort } from 'node:worker_threads'; import { spawnSync } from 'node:child_process'; parentPort.postMessage('stuck'); spawnSync('sleep', ['300']);";
  const worker = new Worker(new URL('data:text/javascript,' + encodeURIComponent(code)));
  await new Promise((resolve) => worker.once('message', resolve));
  await new Promise((resolve) => setTimeout(resolve, 200));
}
console.log('exiting');
exitWithin(70, ${BOUND_MS});
`;

t.test('an exit held by a stuck thread is ended by the watchdog', async (t) => {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', child(true)], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGTERM' });
  t.match(run.stdout, /exiting/, 'the child began to exit');
  t.equal(run.signal, 'SIGKILL', `the watchdog killed it (status ${run.status}, signal ${run.signal}; the test's own timeout would say SIGTERM)`);
});

t.test('an exit nothing holds ends with its own code', async (t) => {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', child(false)], { encoding: 'utf8', timeout: 60_000 });
  t.equal(run.status, 70, `exit 70 (signal ${run.signal}; stderr ${run.stderr.slice(-500)})`);
});
