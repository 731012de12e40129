// Where browser tests write their screenshots for review: test-screenshots/<suite>/ at the checkout's
// root, which git ignores.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function screenshotDir(suite: string): string {
  const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-screenshots', suite);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
