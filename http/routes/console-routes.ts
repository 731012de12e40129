// The console (docs/console.md): a page a person opens in a browser to look at the ledger, served as
// static files from the package and nowhere else: GET /console is the page, GET /console/:file its
// script modules (console/*.ts, built into dist/console/), its style sheet and the chart library
// (echarts' small build, from node_modules). All public, as /docs is: they hold no data, and every
// data call the page makes is an ordinary API call carrying the key the person enters. The routes only
// run for these paths (two router layers), so nothing of them runs for an API request; the files are
// read once, on first use, and kept.
//
// Headers: a strict Content-Security-Policy (scripts and everything else from this origin only, no
// inline script or style, no framing, no form posts, Trusted Types required so no string can become
// markup), nosniff, no referrer, and no caching without revalidation (an ETag) for the console's own
// files, so a browser never mixes modules of two versions; the chart library changes only with the
// package and may be kept a day.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Router } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import { describeRoute } from '../openapi/route-docs.js';

export const CONSOLE_PATH = '/console';
export const CONSOLE_FILE_PATH = '/console/:file';

export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'", "connect-src 'self'",
  "object-src 'none'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
  "require-trusted-types-for 'script'", 'trusted-types default',
].join('; ');

type Origin = 'source' | 'built' | 'echarts';

interface ConsoleFile {
  /** Where it comes from: the console's source folder, its build (dist/console), or the echarts package. */
  origin: Origin;
  file: string;
  type: string;
}

const JS = 'text/javascript; charset=utf-8';

/** The console's script modules, as the build emits them (test/console-files.unit.test.ts keeps this in step). */
export const CONSOLE_MODULES = [
  'api.js', 'balance.js', 'charts.js', 'dom.js', 'format.js', 'hooks.js', 'lists.js', 'main.js', 'node.js', 'page.js', 'precision.js',
  'reconciliation.js', 'session.js', 'transaction.js',
] as const;

/** Every file of the console by the name it is served under (GET /console/<name>); the page is GET /console. */
export const CONSOLE_FILES: Readonly<Record<string, ConsoleFile>> = {
  'console.css': { origin: 'source', file: 'console.css', type: 'text/css; charset=utf-8' },
  'echarts.js': { origin: 'echarts', file: 'echarts.simple.min.js', type: JS },
  ...Object.fromEntries(CONSOLE_MODULES.map((name) => [name, { origin: 'built', file: name, type: JS } satisfies ConsoleFile])),
};

const PAGE: ConsoleFile = { origin: 'source', file: 'index.html', type: 'text/html; charset=utf-8' };

/** How the page calls the API: its own origin's (a core), or the control plane's proxy to a core. */
export type ConsoleApi = 'core' | 'proxy';

/** The package's root: where this module is, in the source tree or under dist/. */
function packageRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const candidate of [path.resolve(here, '../..'), path.resolve(here, '../../..')]) {
    if (fs.existsSync(path.join(candidate, 'console', 'index.html'))) return candidate;
  }
  throw new Error(`the console's files are not in the package (looked above ${here})`);
}

/** Where each origin's files are. */
export function consoleDirectories(): Record<Origin, string> {
  const root = packageRoot();
  return {
    source: path.join(root, 'console'),
    built: path.join(root, 'dist', 'console'),
    // echarts has an exports map; its package.json is exported, and dist/ sits beside it.
    echarts: path.join(path.dirname(createRequire(import.meta.url).resolve('echarts/package.json')), 'dist'),
  };
}

interface Loaded {
  bytes: Buffer;
  etag: string;
}

export function consoleRoutes(router: Router, options: { api: ConsoleApi } = { api: 'core' }): void {
  let directories: Record<Origin, string> | undefined;
  const loaded = new Map<string, Loaded>();
  const load = (name: string, file: ConsoleFile): Loaded => {
    let found = loaded.get(name);
    if (!found) {
      directories ??= consoleDirectories();
      let bytes = fs.readFileSync(path.join(directories[file.origin], file.file));
      if (file === PAGE) bytes = Buffer.from(bytes.toString('utf8').replace('data-api="core"', `data-api="${options.api}"`), 'utf8');
      found = { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
      loaded.set(name, found);
    }
    return found;
  };

  describeRoute(router, `GET ${CONSOLE_PATH}`, {
    tag: 'System', summary: 'The console: the ledger in a browser (each data call it makes is an API call with the key entered)',
    answers: [{ status: 200, description: 'An HTML page', schema: z.string(), contentType: 'text/html' }],
  });
  router.get(CONSOLE_PATH, (ctx) => {
    serve(ctx, load('', PAGE), PAGE, false);
  });

  describeRoute(router, `GET ${CONSOLE_FILE_PATH}`, {
    tag: 'System', summary: "The console's script modules, style sheet and chart library",
    params: { file: `one of ${Object.keys(CONSOLE_FILES).join(', ')}` },
    answers: [{ status: 200, description: 'JavaScript or CSS', schema: z.string(), contentType: ['text/javascript', 'text/css'] }],
    errors: ['GEN_NOT_FOUND'],
  });
  router.get(CONSOLE_FILE_PATH, (ctx) => {
    const name = ctx.params.file as string;
    const file = Object.hasOwn(CONSOLE_FILES, name) ? CONSOLE_FILES[name] : undefined;
    if (!file) throw new ApiError('GEN_NOT_FOUND', `the console has no file ${name}`);
    serve(ctx, load(name, file), file, file.origin === 'echarts');
  });
}

function serve(ctx: Koa.Context, found: Loaded, file: ConsoleFile, lasting: boolean): void {
  ctx.set('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.set('Cache-Control', lasting ? 'public, max-age=86400' : 'no-cache');
  ctx.set('ETag', found.etag);
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = file.type;
  ctx.body = found.bytes;
}
