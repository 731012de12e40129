// Entry of the child process that builds a rebuild's full-text indexes (full-text-build.ts). Exits 0
// when the file is written; on failure prints why and exits 1. If the parent goes away, so does it.

import { buildFullTextFile } from './full-text-build.js';

const [indexFile, outputFile] = process.argv.slice(2);
process.on('disconnect', () => process.exit(1));

if (!indexFile || !outputFile) {
  process.stderr.write('usage: full-text-build-child <index file> <output file>\n');
  process.exit(2);
}

buildFullTextFile(indexFile, outputFile).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  },
);
