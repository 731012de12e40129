// The V8 flags Folio runs with are written in three places that cannot share code (threads/node-flags.ts,
// package.json's start script, the first line of bin/folio.ts): they must agree, and this Node must
// accept them.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { NODE_FLAGS } from '../threads/node-flags.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const flags = NODE_FLAGS.join(' ');

t.test('npm start and the folio command carry the same flags', async (t) => {
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  t.equal(scripts.start, `node ${flags} dist/bin/folio.js serve`, 'package.json start');
  t.match(scripts.bench, `node ${flags} dist/bench/run.js`, 'package.json bench');
  const firstLine = fs.readFileSync(path.join(ROOT, 'bin/folio.ts'), 'utf8').split('\n')[0];
  t.equal(firstLine, `#!/usr/bin/env -S node ${flags}`, 'bin/folio.ts first line');
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
