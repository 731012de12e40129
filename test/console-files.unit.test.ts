// The console's files as the package ships them (http/routes/console-routes.ts): the list of modules the
// route serves is exactly what the build emits, everything it serves weighs under 1 MiB, the page loads
// only files the route serves and holds no inline script or style (its Content-Security-Policy forbids
// both), and the browser code never turns text into markup or code. Run after the build (npm test builds
// first), which is what it checks.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { CONSOLE_CONTENT_SECURITY_POLICY, CONSOLE_FILES, CONSOLE_MODULES, consoleDirectories } from '../http/routes/console-routes.js';

/** What the console may weigh, every file it serves together. */
const CONSOLE_BYTES_MAX = 1024 * 1024;

const directories = consoleDirectories();

t.test('the modules served are the modules built', async (t) => {
  const built = fs.readdirSync(directories.built).filter((name) => name.endsWith('.js')).sort();
  t.same(built, [...CONSOLE_MODULES].sort(), 'every module the build emits is served, and nothing else');
  const sources = fs.readdirSync(directories.source).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts')).map((name) => name.replace(/\.ts$/, '.js')).sort();
  t.same(sources, built, 'one module per source file');
});

t.test('the console weighs under 1 MiB, the chart library included', async (t) => {
  let total = fs.statSync(path.join(directories.source, 'index.html')).size;
  for (const [name, file] of Object.entries(CONSOLE_FILES)) {
    const size = fs.statSync(path.join(directories[file.origin], file.file)).size;
    t.ok(size > 0, `${name}: ${size} bytes`);
    total += size;
  }
  t.ok(total < CONSOLE_BYTES_MAX, `${total} bytes in all (at most ${CONSOLE_BYTES_MAX})`);
});

t.test('the page loads only the files the route serves, and nothing inline', async (t) => {
  const page = fs.readFileSync(path.join(directories.source, 'index.html'), 'utf8');
  const loaded = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
  for (const url of loaded) {
    if (url === 'data:,' || url === '#main') continue;
    t.match(url, /^\/console\//, `${url} is the console's own`);
    t.ok(Object.hasOwn(CONSOLE_FILES, url.slice('/console/'.length)), `${url} is served`);
  }
  t.notMatch(page, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  t.notMatch(page, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or handler');
  t.match(page, /data-api="core"/, 'the page says which API it calls (the control plane serves it with "proxy")');
  t.match(CONSOLE_CONTENT_SECURITY_POLICY, /script-src 'self'(;|$)/);
  t.match(CONSOLE_CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
  t.match(CONSOLE_CONTENT_SECURITY_POLICY, /require-trusted-types-for 'script'/);
  t.notMatch(CONSOLE_CONTENT_SECURITY_POLICY, /unsafe/);
});

t.test('the browser code never turns text into markup or code, nor stores anything but the session key', async (t) => {
  for (const name of fs.readdirSync(directories.source).filter((file) => file.endsWith('.ts'))) {
    const text = fs.readFileSync(path.join(directories.source, name), 'utf8');
    t.notMatch(text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*'style'|localStorage|document\.cookie|indexedDB/,
      `${name} uses no markup sink, no eval, and no storage but sessionStorage`);
    t.notMatch(text, /https?:\/\//, `${name} names no other origin`);
    t.notMatch(text, /parseFloat|toFixed\(|toPrecision\(/, `${name} rounds nothing`);
  }
  const storing = fs.readdirSync(directories.source).filter((file) => file.endsWith('.ts') && fs.readFileSync(path.join(directories.source, file), 'utf8').includes('sessionStorage'));
  t.same(storing, ['session.ts'], 'only session.ts touches sessionStorage');
});
