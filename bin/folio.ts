#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 node --max-semi-space-size=64
// The `folio` command's entry point. Folio runs on Node 24 LTS, which `npm ci` installs into
// node_modules (the `node` package in dependencies), so every npm script already runs on it. Started
// any other way by an older Node (a shell whose `node` is the machine's own), this re-runs the same
// command on the bundled Node instead of failing later in some less obvious way. It imports nothing
// heavy before that decision, so the older Node never loads the rest of Folio.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS, nodeEnvironment } from '../threads/node-flags.js';

/** The oldest major version of Node that Folio runs on (package.json engines says the same). */
export const NODE_MAJOR_MIN = 24;

const major = Number(process.versions.node.split('.')[0]);
if (major >= NODE_MAJOR_MIN) await import('./folio-commands.js');
else relaunch();

function relaunch(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const bundled = path.join(root, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(bundled)) {
    process.stderr.write(`folio: needs Node ${NODE_MAJOR_MIN} or newer (this is ${process.version}); run "npm ci" in ${root} to install it\n`);
    process.exit(1);
  }
  const child = spawn(bundled, [...NODE_FLAGS, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env: nodeEnvironment() });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
}
