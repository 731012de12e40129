// Where a worker thread's (or a child process's) entry module is. Built, it is the .js file beside its
// caller. When the test runner runs the TypeScript sources, a worker started on a .ts file compiles its
// whole module graph again in its own isolate, about two seconds per worker; the tests start hundreds of them (every
// server has an index projector, every snapshot is a job). So under the sources, the compiled file in
// dist/ is used when it is at least as new as every source file (`npm test` builds first), and the
// TypeScript source otherwise; a compiled worker also drops the runner's TypeScript loader from its
// options (workers inherit them, and loading the compiler alone takes over a second). The source folders
// are the ones tsconfig.build.json compiles, read from there so the two lists cannot drift apart.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

let newestSourceMs: number | undefined;

function newestSource(root: string): number {
  if (newestSourceMs !== undefined) return newestSourceMs;
  let newest = 0;
  const { include } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  for (const directory of include) {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(root, directory));
    } catch {
      continue;
    }
    for (const name of names) {
      if (name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(path.join(root, directory, name)).mtimeMs);
    }
  }
  newestSourceMs = newest;
  return newest;
}

export interface WorkerEntry {
  file: URL;
  /** Node options for the worker; undefined inherits the process's. */
  execArgv?: string[];
}

/** The entry of the worker module `name` (without extension) beside the module at `callerUrl`. */
export function workerEntry(callerUrl: string, name: string): WorkerEntry {
  const caller = fileURLToPath(callerUrl);
  if (!caller.endsWith('.ts')) return { file: new URL(`./${name}.js`, callerUrl) };
  const directory = path.dirname(caller);
  const root = path.dirname(directory);
  const compiled = path.join(root, 'dist', path.basename(directory), `${name}.js`);
  try {
    if (fs.statSync(compiled).mtimeMs >= newestSource(root)) return { file: pathToFileURL(compiled), execArgv: [] };
  } catch {
    // not built: use the source
  }
  return { file: new URL(`./${name}.ts`, callerUrl) };
}
