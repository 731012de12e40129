// Where a worker thread's (or a child process's) entry module is. Built, it is the .js file beside its
// caller. When the test runner runs the TypeScript sources, a worker started on a .ts file compiles its
// whole module graph again in its own isolate, about two seconds per worker; the tests start hundreds of them (every
// server has an index projector, every snapshot is a job). So under the sources, the compiled file in
// dist/ is used when it is at least as new as every source file (`npm test` builds first), and the
// TypeScript source otherwise; a compiled worker also drops the runner's TypeScript loader from its
// options (workers inherit them, and loading the compiler alone takes over a second). The checkout is
// the nearest folder above the caller holding tsconfig.build.json; the source folders are the ones it
// compiles, read from there so the two lists cannot drift apart, and walked to any depth (an edit in
// http/routes/ must make a worker of http/ fall back to the sources as surely as one in http/ itself).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUILD_CONFIG = 'tsconfig.build.json';

/** The newest modification time of any .ts file under each checkout, computed once per process. */
const newestSourceMsByRoot = new Map<string, number>();

/** The newest .ts file's modification time in `directory` and below (0 when there is none or it is missing). */
function newestIn(directory: string): number {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(directory, { withFileTypes: true });
  } catch {
    return 0;
  }
  let newest = 0;
  for (const entry of entries) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestIn(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** The newest source file of the checkout at `root`, over every folder its build compiles. */
export function newestSourceMs(root: string): number {
  let newest = newestSourceMsByRoot.get(root);
  if (newest !== undefined) return newest;
  const { include } = JSON.parse(fs.readFileSync(path.join(root, BUILD_CONFIG), 'utf8')) as { include: string[] };
  newest = Math.max(0, ...include.map((directory) => newestIn(path.join(root, directory))));
  newestSourceMsByRoot.set(root, newest);
  return newest;
}

/** The nearest folder at or above `directory` holding the build's configuration: the checkout. */
export function checkoutRoot(directory: string): string | undefined {
  for (let current = directory; ; current = path.dirname(current)) {
    if (fs.existsSync(path.join(current, BUILD_CONFIG))) return current;
    if (path.dirname(current) === current) return undefined;
  }
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
  const root = checkoutRoot(directory);
  if (root !== undefined) {
    const compiled = path.join(root, 'dist', path.relative(root, directory), `${name}.js`);
    try {
      if (fs.statSync(compiled).mtimeMs >= newestSourceMs(root)) return { file: pathToFileURL(compiled), execArgv: [] };
    } catch {
      // not built: use the source
    }
  }
  return { file: new URL(`./${name}.ts`, callerUrl) };
}
