// The V8 flags and the malloc setting Folio runs with are written in three places that cannot share code
// (threads/node-flags.ts, package.json's scripts, the first line of bin/folio.ts): they must agree, this
// Node must accept them, and the malloc setting must do what it is there for.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { MALLOC_SETTING, NODE_FLAGS, nodeEnvironment } from '../threads/node-flags.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const flags = NODE_FLAGS.join(' ');
const command = `GLIBC_TUNABLES=${MALLOC_SETTING} node ${flags}`;

t.test('npm start and the folio command carry the same flags and malloc setting', async (t) => {
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  t.equal(scripts.start, `${command} dist/bin/folio.js serve`, 'package.json start');
  t.match(scripts.bench, `${command} dist/bench/run.js`, 'package.json bench');
  for (const name of ['folio', 'cloud', 'nemesis', 'bench:snapshots']) t.match(scripts[name], command, `package.json ${name}`);
  const firstLine = fs.readFileSync(path.join(ROOT, 'bin/folio.ts'), 'utf8').split('\n')[0];
  t.equal(firstLine, `#!/usr/bin/env -S ${command}`, 'bin/folio.ts first line');
});

t.test('the environment of a started process adds the malloc setting, and keeps a threshold set by hand', async (t) => {
  t.equal(nodeEnvironment({ PATH: '/bin' }).GLIBC_TUNABLES, MALLOC_SETTING);
  t.equal(nodeEnvironment({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).GLIBC_TUNABLES, `glibc.malloc.arena_max=2:${MALLOC_SETTING}`);
  t.equal(nodeEnvironment({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' }).GLIBC_TUNABLES, 'glibc.malloc.mmap_threshold=65536');
});

t.test('with the malloc setting, large buffers freed between small ones that live on are given back', { skip: process.platform !== 'linux' && 'glibc on Linux only' }, async (t) => {
  // One large buffer freed first (glibc then raises its threshold to its size, by default), then 192 of
  // 1 MiB each with a small buffer kept after every one, then the large ones dropped: by default they
  // were carved from the arena, and the small ones left between them keep it from shrinking.
  const script = `
    const rssMiB = () => Number(/^VmRSS:\\s+(\\d+) kB/m.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
    let first = Buffer.allocUnsafeSlow(4 << 20); first.fill(1); first = undefined; gc();
    const kept = []; let large = [];
    for (let i = 0; i < 192; i += 1) { const b = Buffer.allocUnsafeSlow(1 << 20); b.fill(1); large.push(b); kept.push(Buffer.allocUnsafeSlow(256)); }
    const full = rssMiB();
    large = undefined; gc(); gc();
    process.stdout.write(String(full - rssMiB()));`;
  const givenBackMiB = (env: NodeJS.ProcessEnv): number => Number(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env }));
  const withSetting = givenBackMiB(nodeEnvironment({ PATH: process.env.PATH }));
  t.ok(withSetting >= 150, `with it, ${withSetting.toFixed(0)} of 192 MiB given back`);
});

t.test('this Node accepts them', async (t) => {
  const out = execFileSync(process.execPath, [...NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
  t.equal(out, 'ok');
});

t.test('worker threads get the young generation their own limits ask for, not the main thread\'s flag', async (t) => {
  const nodeFlags = pathToFileURL(path.join(ROOT, 'dist/threads/node-flags.js')).href;
  // A worker asking for 32 MB of young generation and 192 MB of old: its heap limit tells which applied.
  const script = (own: boolean) => `
    const { Worker } = await import('node:worker_threads');
    const flags = await import(${JSON.stringify(nodeFlags)});
    if (${own}) flags.workerHeapsOwnLimits();
    const worker = new Worker("require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)", { eval: true, execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 32, maxOldGenerationSizeMb: 192 } });
    worker.once('message', (limit) => { process.stdout.write(String(limit / 2 ** 20)); void worker.terminate(); });`;
  const limitMb = (own: boolean): number => Number(execFileSync(process.execPath, [...NODE_FLAGS, '--input-type=module', '-e', script(own)], { encoding: 'utf8' }));
  t.equal(limitMb(false), 192 + 3 * 64, 'without it the flag wins: 192 MB of young generation');
  t.ok(limitMb(true) <= 192 + 64, 'with it, the worker\'s own 32 MB (V8 rounds to its semi-space steps)');
});
