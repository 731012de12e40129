// The layering docs/architecture.md describes, checked on every import of every source file: the
// engine imports nothing of Folio's outside itself; the shared encodings (codec/, wire/) and the thread
// helper (threads/) only the engine; each adapter the engine and the shared layers, never a sibling
// adapter (what it needs from one is a port it declares); the application layer (app/) wires adapters
// together; operator tools (ops/) use the application layer; bin/ holds the entry points.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = ['engine', 'codec', 'wire', 'threads'];
const TOOLS = ['bench', 'fuzz'];

/** Folders each folder's sources may import from (besides their own). */
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
  replication: SHARED,
  app: [...SHARED, 'wal', 'lookups', 'http', 'hooks', 'index', 'snapshots', 'reconciliation', 'replication'],
  ops: [...SHARED, 'wal', 'lookups', 'http', 'hooks', 'index', 'snapshots', 'reconciliation', 'replication', 'app'],
  cloud: [...SHARED, 'http', 'app'],
  // the HTTP fuzzer: drives the routes from their own schemas, so it reads http/ (and cloud/ for the
  // control plane's scopes) like a client would
  fuzz: [...SHARED, 'http', 'app', 'bench', 'cloud'],
  bin: [...SHARED, 'wal', 'lookups', 'http', 'hooks', 'index', 'snapshots', 'reconciliation', 'replication', 'app', 'ops', 'cloud'],
  // the browser's console: a project of its own (console/tsconfig.json), which reaches the server only
  // through the public API over HTTP, never by importing it
  console: [],
};

/** Source folders built by a project of their own (not in tsconfig.build.json), checked all the same. */
const OWN_PROJECTS = ['console'];

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

t.test('every import respects the layers', async (t) => {
  const { include } = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  // The benches and the fuzzer are tools that drive the whole server from outside: they use any layer.
  const layered = [...include.filter((folder) => !TOOLS.includes(folder)), ...OWN_PROJECTS];
  t.same(layered.filter((folder) => !(folder in ALLOWED)), [], 'every source folder has a rule here');
  const violations: string[] = [];
  for (const folder of layered) {
    for (const file of sourcesOf(folder)) {
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        const target = path.relative(ROOT, path.resolve(path.dirname(file), match[1] as string));
        const targetFolder = target.split(path.sep)[0] as string;
        if (targetFolder === folder || ALLOWED[folder]?.includes(targetFolder)) continue;
        violations.push(`${path.relative(ROOT, file)} imports ${target}`);
      }
    }
  }
  t.same(violations, [], 'no import crosses a layer the wrong way');
});

/** Source files of a folder with their text. */
function textsOf(folder: string): Array<{ file: string; text: string }> {
  return sourcesOf(folder).map((file) => ({ file: path.relative(ROOT, file), text: fs.readFileSync(file, 'utf8') }));
}

t.test('only the engine and the application layer touch the engine\'s state', async (t) => {
  // Everything else reads through the view (engine/ledger-view.ts) and writes through commands, so that
  // a worker thread or a standby can answer for the engine.
  const { include } = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  const reaching: string[] = [];
  for (const folder of include.filter((name) => name !== 'engine' && name !== 'app' && !TOOLS.includes(name))) {
    for (const { file, text } of textsOf(folder)) {
      if (/\bengine\.state\b/.test(text)) reaching.push(file);
    }
  }
  t.same(reaching, [], 'no engine.state outside engine/ and app/');
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
