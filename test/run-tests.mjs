#!/usr/bin/env node
// `npm test`: builds dist/ (child-process tests run the built CLI), type-checks everything including
// the tests (tap runs .ts without checking types), then runs the tap suite with the TAP reporter and
// ends with the plain `N passed, N failed` line CI looks for. Counted tests are each file's top-level
// tests; a failed build, type check, or a file that dies without reporting a test counts as one failure.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * The slowest files (each a minute or more on a two-core machine) go first, so the two tap jobs are not
 * left with one of them alone at the end; the rest follow in name order.
 */
const SLOW_FIRST = [
  'nemesis.sim.test.ts', 'cloud-upgrade.int.test.ts', 'snapshot-crash.sim.test.ts', 'snapshot-startup.int.test.ts', 'snapshot-restore.int.test.ts', 'wal-replay.int.test.ts',
  'auth.int.test.ts', 'hook-delivery.int.test.ts', 'index-crash.sim.test.ts', 'snapshot-cli.int.test.ts', 'search.int.test.ts',
  'crash.int.test.ts', 'http-errors.int.test.ts',
];

function testFiles() {
  const all = fs.readdirSync('test').filter((name) => name.endsWith('.test.ts')).sort();
  const rank = (name) => (SLOW_FIRST.includes(name) ? SLOW_FIRST.indexOf(name) : SLOW_FIRST.length);
  return all.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1)).map((name) => `test/${name}`);
}

let passed = 0;
let failed = 0;

// The console's browser code is a project of its own (it needs the DOM's types): built with the rest.
for (const [name, project] of [['build', 'tsconfig.build.json'], ['console build', 'console/tsconfig.json'], ['type check', 'tsconfig.json']]) {
  const extra = name === 'type check' ? ['--noEmit'] : [];
  const result = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', project, ...extra], { stdio: 'inherit' });
  if (result.status === 0) passed += 1;
  else {
    process.stdout.write(`not ok - ${name} failed\n`);
    failed += 1;
  }
}

const args = ['--reporter=tap', ...(process.argv.length > 2 ? process.argv.slice(2) : testFiles())];
const child = spawn(process.execPath, ['node_modules/tap/dist/esm/run.mjs', ...args], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FOLIO_LOG_LEVEL: process.env.FOLIO_LOG_LEVEL ?? 'warn' },
});

let failedInFile = 0;
let tapFailed = 0;
const lines = createInterface({ input: child.stdout });
lines.on('line', (line) => {
  process.stdout.write(line + '\n');
  if (/^ {4}ok \d+/.test(line)) passed += 1;
  else if (/^ {4}not ok \d+/.test(line)) {
    tapFailed += 1;
    failedInFile += 1;
  } else if (/^not ok \d+/.test(line)) {
    if (failedInFile === 0) tapFailed += 1;
    failedInFile = 0;
  } else if (/^ok \d+/.test(line)) failedInFile = 0;
});

child.on('close', (code) => {
  if (code !== 0 && tapFailed === 0) tapFailed = 1;
  failed += tapFailed;
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  process.exit(failed > 0 ? 1 : 0);
});
