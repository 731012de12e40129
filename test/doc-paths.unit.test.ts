// Every project path a comment or a doc names exists: a path from the root (`engine/carry-out.ts`,
// `docs/decisions-core.md`, a folder), or a file name alone (`carry-out.ts`), which must be a file of the
// project. A reader who follows a pointer must find the thing. Paths with placeholders (`<name>`, `*`),
// files of other packages, what the server or the benches write at run time (folio.json, data/,
// bench/results/) and the steering documents outside the project are not project paths.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_FOLDERS = ['bench', 'bin', 'cloud', 'codec', 'console', 'cutover', 'engine', 'fuzz', 'hooks', 'http', 'index', 'lookups', 'ops', 'reconciliation', 'replication', 'runtime', 'server', 'snapshots', 'test', 'threads', 'wal', 'wire', 'workers'];
const FOLDERS = [...SOURCE_FOLDERS, 'docs', '.ci'];
const EXTENSIONS = 'ts|md|mjs|sql|json';
/** `folder/...` paths, and bare file names, as written in text. */
const FOLDER_PATH = new RegExp(`(?<![\\w./-])((?:${FOLDERS.map((name) => name.replace('.', '\\.')).join('|')})/[\\w./-]*[\\w-])`, 'g');
const BARE_NAME = new RegExp(`(?<![\\w./<*-])([\\w-]+\\.(?:${EXTENSIONS}))(?![\\w/*])`, 'g');
/** Files the server, the operator or the benches make at run time, named in docs as such. */
const RUNTIME_FILES = new Set(['folio.json', 'openapi.json']);
const RUNTIME_FOLDERS = ['bench/results/'];

function filesOf(folder: string, extension: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    if (!fs.existsSync(dir)) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'results') continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(extension)) files.push(full);
    }
  };
  walk(path.join(ROOT, folder));
  return files;
}

/** The text of a source file that is prose: its comments (strings in code name runtime paths, not docs). */
function commentsOf(text: string): string {
  const parts: string[] = [];
  for (const match of text.matchAll(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g)) parts.push(match[0]);
  return parts.join('\n');
}

/** Every file name in the project's folders (a bare name may point at any of them). */
function projectFileNames(): Set<string> {
  const names = new Set<string>(fs.readdirSync(ROOT));
  for (const folder of FOLDERS) {
    for (const extension of EXTENSIONS.split('|')) for (const file of filesOf(folder, `.${extension}`)) names.add(path.basename(file));
  }
  return names;
}

t.test('every path a comment or a doc names exists', async (t) => {
  const documents: Array<{ file: string; text: string }> = [];
  for (const folder of SOURCE_FOLDERS) {
    for (const file of filesOf(folder, '.ts')) documents.push({ file, text: commentsOf(fs.readFileSync(file, 'utf8')) });
  }
  for (const file of [...filesOf('docs', '.md'), path.join(ROOT, 'README.md')]) documents.push({ file, text: fs.readFileSync(file, 'utf8') });
  const names = projectFileNames();
  const knownExtension = new RegExp(`\\.(?:${EXTENSIONS})$`);
  const missing: string[] = [];
  for (const { file, text } of documents) {
    const where = path.relative(ROOT, file);
    for (const match of text.matchAll(FOLDER_PATH)) {
      const named = (match[1] as string).replace(/[.]+$/, '');
      const next = text[(match.index ?? 0) + (match[0] as string).length] ?? '';
      if ('*<{'.includes(next) || RUNTIME_FOLDERS.some((folder) => named.startsWith(folder))) continue;
      // A file of another kind under a project folder's name (a package's bin/chromium.br) is not ours.
      const last = named.slice(named.lastIndexOf('/') + 1);
      if (last.includes('.') && !knownExtension.test(last)) continue;
      if (!fs.existsSync(path.join(ROOT, named))) missing.push(`${where} names ${named}`);
    }
    for (const match of text.matchAll(BARE_NAME)) {
      const named = match[1] as string;
      if (!names.has(named) && !RUNTIME_FILES.has(named)) missing.push(`${where} names ${named}`);
    }
  }
  t.same(missing, [], 'no pointer leads nowhere');
});
