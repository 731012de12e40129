// The layering docs/architecture.md describes, checked on every import of every source file: the
// engine imports nothing of Folio's outside itself; the shared encodings (codec/, wire/) and the thread
// helper (threads/) only the engine; each adapter the engine and the shared layers, never a sibling
// adapter (what it needs from one is a port it declares); above them, each part of running a ledger in a
// folder of its own: runtime/ (one ledger running) joins the adapters, cutover/ moves a ledger between
// processes, workers/ serves HTTP on threads around the engine, replication/ is a node of a group (its
// PostgreSQL stores, replication/postgres/, are an adapter like any other), server/ assembles them into
// `folio serve`; operator tools (ops/) use them; bin/ holds the entry points. A layer is a folder, or a
// folder inside one that has a row of its own (replication/postgres/): a file belongs to the deepest.
// No import circle either, at any depth: a circle makes two files one, whatever their folders say.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = ['engine', 'codec', 'wire', 'threads'];
const ADAPTERS = ['wal', 'lookups', 'http', 'hooks', 'index', 'snapshots', 'reconciliation', 'replication/postgres'];
const TOOLS = ['bench', 'fuzz', 'nemesis'];

/** Layers each layer's sources may import from (besides their own). */
const ALLOWED: Record<string, readonly string[]> = {
  engine: [],
  codec: ['engine'],
  wire: ['engine'],
  threads: [],
  wal: SHARED,
  lookups: SHARED,
  http: SHARED,
  hooks: SHARED,
  index: SHARED,
  snapshots: SHARED,
  reconciliation: SHARED,
  'replication/postgres': SHARED,
  runtime: [...SHARED, ...ADAPTERS],
  cutover: [...SHARED, ...ADAPTERS, 'runtime'],
  workers: [...SHARED, ...ADAPTERS, 'runtime', 'cutover'],
  replication: [...SHARED, ...ADAPTERS, 'runtime'],
  server: [...SHARED, ...ADAPTERS, 'runtime', 'cutover', 'workers', 'replication'],
  ops: [...SHARED, ...ADAPTERS, 'runtime', 'cutover', 'replication', 'server'],
  cloud: [...SHARED, 'http', 'server'],
  // the HTTP fuzzer: drives the routes from their own schemas, so it reads http/ (and cloud/ for the
  // control plane's scopes) like a client would
  fuzz: [...SHARED, 'http', 'server', 'bench', 'cloud'],
  bin: [...SHARED, ...ADAPTERS, 'runtime', 'cutover', 'workers', 'replication', 'server', 'ops', 'cloud'],
  // the browser's console: a project of its own (console/tsconfig.json), which reaches the server only
  // through the public API over HTTP, never by importing it
  console: [],
};

/** Source folders built by a project of their own (not in tsconfig.build.json), checked all the same. */
const OWN_PROJECTS = ['console'];

/** The layer a project path (relative to the root) belongs to: the deepest folder with a row in ALLOWED. */
function layerOf(relative: string): string {
  const parts = relative.split(path.sep);
  for (let depth = parts.length - 1; depth > 0; depth -= 1) {
    const folder = parts.slice(0, depth).join('/');
    if (folder in ALLOWED) return folder;
  }
  return parts[0] as string;
}

function sourcesOf(folder: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) files.push(full);
    }
  };
  walk(path.join(ROOT, folder));
  return files;
}

/** Each source file's relative imports, as project paths of the .ts files they name. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)]
    .map((match) => path.relative(ROOT, path.resolve(path.dirname(file), (match[1] as string).replace(/\.js$/, '.ts'))));
}

function layeredFolders(): string[] {
  const { include } = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  // The benches, the fuzzer and the nemesis are tools that drive the whole server from outside: they use any layer.
  return [...include.filter((folder) => !TOOLS.includes(folder)), ...OWN_PROJECTS];
}

t.test('every import respects the layers', async (t) => {
  const layered = layeredFolders();
  t.same(layered.filter((folder) => !(folder in ALLOWED)), [], 'every source folder has a rule here');
  const violations: string[] = [];
  for (const folder of layered) {
    for (const file of sourcesOf(folder)) {
      const layer = layerOf(path.relative(ROOT, file));
      for (const target of importsOf(file)) {
        const targetLayer = layerOf(target);
        if (targetLayer === layer || ALLOWED[layer]?.includes(targetLayer)) continue;
        violations.push(`${path.relative(ROOT, file)} imports ${target}`);
      }
    }
  }
  t.same(violations, [], 'no import crosses a layer the wrong way');
});

t.test('no import circle', async (t) => {
  const { include } = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  const graph = new Map<string, string[]>();
  for (const folder of [...include, ...OWN_PROJECTS]) {
    for (const file of sourcesOf(folder)) graph.set(path.relative(ROOT, file), importsOf(file));
  }
  t.same(importCircles(graph), [], 'every file can be read before the files that import it');
});

/** The strongly connected components of more than one file (Tarjan's algorithm), each as a sorted list. */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (;;) {
      const member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    if (component.length > 1) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

t.test('refusals are closed codes until the HTTP edge', async (t) => {
  // Below http/ a refusal is a value with a code from a closed set (engine/rejections.ts, results of the
  // ports, http/ports/node-refusal.ts); only the edges (http/, and cloud/, the control plane's own HTTP
  // app) build the error envelope. And nothing tells errors apart by the text of their class's name.
  const edges = ['http', 'cloud'];
  // The platform's own errors come as DOMExceptions and built-ins, told apart by name by design.
  const PLATFORM_ERRORS = ['TypeError', 'TimeoutError', 'AbortError'];
  const building: string[] = [];
  const byName: string[] = [];
  for (const folder of layeredFolders()) {
    for (const file of sourcesOf(folder)) {
      const relative = path.relative(ROOT, file);
      const text = fs.readFileSync(file, 'utf8');
      if (!edges.includes(folder) && importsOf(file).includes(path.join('http', 'api-error.ts'))) building.push(relative);
      for (const match of text.matchAll(/\.name\)?\s*===\s*'([A-Z]\w*)'|\[('[A-Z]\w*(?:Error|Refusal)'(?:,\s*'[A-Z]\w*')*)\]\.includes\(/g)) {
        const names = (match[1] ?? match[2] ?? '').split(',').map((name) => name.trim().replace(/'/g, ''));
        if (names.some((name) => /(Error|Refusal)$/.test(name) && !PLATFORM_ERRORS.includes(name))) byName.push(relative);
      }
    }
  }
  t.same(building, [], 'nothing below the edge imports the error envelope (http/api-error.ts)');
  t.same(byName, [], 'no error is told apart by its class name');
});

/** Source files of a folder with their text. */
function textsOf(folder: string): Array<{ file: string; text: string }> {
  return sourcesOf(folder).map((file) => ({ file: path.relative(ROOT, file), text: fs.readFileSync(file, 'utf8') }));
}

t.test('only the engine and the running ledger touch the engine\'s state', async (t) => {
  // Everything else reads through the view (engine/ledger-view.ts) and writes through commands, so that
  // a worker thread or a standby can answer for the engine.
  const { include } = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  const reaching: string[] = [];
  for (const folder of include.filter((name) => name !== 'engine' && name !== 'runtime' && !TOOLS.includes(name))) {
    for (const { file, text } of textsOf(folder)) {
      if (/\bengine\.state\b/.test(text)) reaching.push(file);
    }
  }
  t.same(reaching, [], 'no engine.state outside engine/ and runtime/');
});

t.test('every write is a command of the one operation table', async (t) => {
  const engineFiles = textsOf('engine');
  const table = engineFiles.find(({ file }) => file === path.join('engine', 'operations.ts'))?.text ?? '';
  // Every operation declared anywhere in the engine is in the table.
  const declared: string[] = [];
  for (const { text } of engineFiles) {
    for (const match of text.matchAll(/^(?:export )?const (\w+): (?:Decision|DryRunnable|Work)</gm)) declared.push(match[1] as string);
  }
  t.ok(declared.length >= 10, `${declared.length} operations found`);
  t.same(declared.filter((name) => !new RegExp(`\\b${name}\\b`).test(table.slice(table.indexOf('export const OPERATIONS')))), [], 'each is in OPERATIONS');
  // The engine's public surface writes only through run and dryRun.
  const engineSource = engineFiles.find(({ file }) => file === path.join('engine', 'ledger-engine.ts'))?.text ?? '';
  const body = engineSource.slice(engineSource.indexOf('export class LedgerEngine'));
  const methods = [...body.matchAll(/^ {2}(?!private |readonly |constructor)(?:get )?(\w+)(?:<[^>]*>)?\(/gm)].map((match) => match[1]);
  t.same(methods.sort(), ['dryRun', 'replay', 'run'], 'LedgerEngine has run, dryRun and replay, nothing else public');
  // Nothing outside the engine decides on its own: decide* functions are the operations' business.
  const { include } = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  const deciding: string[] = [];
  for (const folder of include.filter((name) => name !== 'engine' && !TOOLS.includes(name))) {
    for (const { file, text } of textsOf(folder)) {
      for (const match of text.matchAll(/\bdecide[A-Z]\w*\(/g)) deciding.push(`${file}: ${match[0]}`);
    }
  }
  t.same(deciding, [], 'no decide* call outside engine/');
});
