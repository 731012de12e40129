// threads/worker-entry.ts under the test runner: a worker module's compiled file in dist/ is used only
// while it is at least as new as every source file of the checkout, at any depth (an edit in
// http/routes/ counts as surely as one in http/), and for a module more than one folder deep.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { workerEntry } from '../threads/worker-entry.js';

/** A checkout of its own: tsconfig.build.json compiling `app` and `http`, one worker module in `folder`. */
function checkout(t: Test, folder = 'app/workers'): { root: string; callerUrl: string; compiled: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-entry-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.writeFileSync(path.join(root, 'tsconfig.build.json'), JSON.stringify({ include: ['app', 'http'] }));
  const write = (file: string, mtimeMs: number): string => {
    const full = path.join(root, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, '');
    fs.utimesSync(full, mtimeMs / 1000, mtimeMs / 1000);
    return full;
  };
  const old = Date.now() - 60_000;
  const caller = write(`${folder}/pool.ts`, old);
  write(`${folder}/worker.ts`, old);
  write('http/routes/some-route.ts', old);
  const compiled = write(`dist/${folder}/worker.js`, old + 1_000);
  return { root, callerUrl: pathToFileURL(caller).href, compiled };
}

function touch(file: string, mtimeMs: number): void {
  fs.utimesSync(file, mtimeMs / 1000, mtimeMs / 1000);
}

t.test('a module two folders deep uses its compiled file while that is newest', async (t) => {
  const { callerUrl, compiled } = checkout(t);
  const entry = workerEntry(callerUrl, 'worker');
  t.equal(fileURLToPath(entry.file), compiled);
  t.same(entry.execArgv, [], 'the compiled worker drops the runner\'s loader');
});

t.test('an edit in a nested folder of another layer sends workers back to the sources', async (t) => {
  const fresh = checkout(t, 'app');
  t.equal(fileURLToPath(workerEntry(fresh.callerUrl, 'worker').file), fresh.compiled, 'compiled while nothing is newer');
  const edited = checkout(t, 'app');
  touch(path.join(edited.root, 'http/routes/some-route.ts'), Date.now());
  const entry = workerEntry(edited.callerUrl, 'worker');
  t.equal(fileURLToPath(entry.file), path.join(edited.root, 'app/worker.ts'));
  t.equal(entry.execArgv, undefined);
});

t.test('without a compiled file the source is used', async (t) => {
  const { root, callerUrl, compiled } = checkout(t);
  fs.rmSync(compiled);
  t.equal(fileURLToPath(workerEntry(callerUrl, 'worker').file), path.join(root, 'app/workers/worker.ts'));
});

t.test('a built caller names the .js beside it', async (t) => {
  const url = pathToFileURL('/somewhere/dist/app/pool.js').href;
  t.equal(fileURLToPath(workerEntry(url, 'worker').file), '/somewhere/dist/app/worker.js');
});
