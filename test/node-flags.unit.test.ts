// The V8 flags Folio runs with are written in three places that cannot share code (app/node-flags.ts,
// package.json's start script, the first line of bin/folio.ts): they must agree, and this Node must
// accept them.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { NODE_FLAGS } from '../app/node-flags.js';

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
