#!/usr/bin/env node
// The `folio` command line: `folio serve` runs the ledger; other commands manage a data directory.

import { ConfigError, loadConfig } from './config.js';
import { reindexCommand } from './reindex-command.js';
import { serve } from './serve.js';

const USAGE = `usage: folio <command> [options]

commands:
  serve [--config FILE]    run the ledger API (defaults: 127.0.0.1:5001, data in ./data)
  reindex [--config FILE] [--offline]
                           rebuild the query index from the log (asks a running server to do it,
                           or rebuilds the file itself when none answers or with --offline)
`;

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index === -1) return undefined;
  const value = args[index + 1];
  if (value === undefined || value.startsWith('--')) throw new ConfigError(`${name} needs a value`);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'serve':
      await serve(loadConfig(option(args, '--config')));
      return -1; // keeps running until a signal
    case 'reindex':
      return reindexCommand(loadConfig(option(args, '--config')), args);
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command ${command}\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    const message = error instanceof ConfigError ? error.message : (error as Error).stack ?? String(error);
    process.stderr.write(`folio: ${message}\n`);
    process.exit(1);
  },
);
