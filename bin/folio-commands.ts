// The `folio` commands: `folio serve` runs the ledger; the others manage a data directory. Loaded by
// bin/folio.ts once it knows the runtime is the one Folio supports.

import { cloudCommand } from '../cloud/cloud-command.js';
import { ConfigError, loadConfig } from '../server/config.js';
import { openApiCommand } from '../server/openapi-command.js';
import { reconCommand } from '../ops/recon-command.js';
import { reindexCommand } from '../ops/reindex-command.js';
import { serve } from '../server/serve.js';
import { backupDataDir } from '../ops/backup.js';
import { backupCommand, restoreCommand, snapshotCommand, snapshotsCommand, verifyCommand } from '../ops/snapshot-commands.js';

const USAGE = `usage: folio <command> [options]

commands:
  serve [--config FILE]    run the ledger API (defaults: 127.0.0.1:5001, data in ./data)
  verify [--data DIR]      replay the log from genesis and check chain, row hashes, snapshots, zero-sum
  snapshot [--url URL]     ask the running server to write a snapshot now
  snapshots [--data DIR]   list snapshots: seq, time, size, state hash, status
  restore --snapshot FILE --data DIR [--to-seq N] [--log DIR]
                           build a new data dir from a snapshot and the log up to seq N, then verify it
  backup --out DIR [--data DIR]
                           copy the log and the newest snapshot while the server runs
  cloud                    run the cloud control plane (127.0.0.1:5002, data in ./data-cloud; see README)
  openapi                  print the API's OpenAPI 3.1 document (served at /openapi.json, shown at /docs)
  reindex [--config FILE] [--offline]
                           rebuild the query index from the log (asks a running server to do it,
                           or rebuilds the file itself when none answers or with --offline)
  recon upload|start|status [--url URL]
                           reconciliation through a running server: upload a statement, start a run
                           and follow its progress, show a run (folio recon help for the options)
  replication status [--config FILE] [--json]
                           a replicated group as PostgreSQL holds it: the lease, the log's end, and
                           every node's role, term, applied seq and lag (docs/operations.md)
  replication leave [--data DIR]
                           make a data directory of a group an independent single-node ledger, its
                           log kept whole (for one its group refuses: docs/operations.md)
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
      await serve(loadConfig(option(args, '--config')), backupDataDir);
      return -1; // keeps running until a signal
    case 'verify':
      return verifyCommand((name) => option(args, name));
    case 'snapshot':
      return snapshotCommand((name) => option(args, name));
    case 'snapshots':
      return snapshotsCommand((name) => option(args, name));
    case 'restore':
      return restoreCommand((name) => option(args, name));
    case 'backup':
      return backupCommand((name) => option(args, name));
    case 'cloud':
      await cloudCommand();
      return -1; // keeps running until a signal
    case 'openapi':
      return openApiCommand();
    case 'recon':
      return reconCommand(args, (name) => option(args, name));
    case 'reindex':
      return reindexCommand(loadConfig(option(args, '--config')), args);
    case 'replication': {
      // Loaded only here: no other command loads the PostgreSQL client.
      const { replicationCommand } = await import('../ops/replication-command.js');
      return replicationCommand(args, loadConfig(option(args, '--config')), (name) => option(args, name));
    }
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
    if (code >= 0) exitWhenWritten(code);
  },
  (error: unknown) => {
    const message = error instanceof ConfigError || isOperatorError(error)
      ? operatorMessage(error as Error, process.argv[2])
      : (error as Error).stack ?? String(error);
    process.stderr.write(`folio: ${message}\n`);
    exitWhenWritten(1);
  },
);

/**
 * Exits once everything written to stdout and stderr has left the process. Writes to a pipe are
 * asynchronous, and process.exit() drops what is still queued: `folio verify` read through a pipe lost
 * its last lines, the verdict among them, once its report passed a few tens of kilobytes.
 */
function exitWhenWritten(code: number): void {
  let open = 2;
  const done = (): void => {
    open -= 1;
    if (open === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

/** Failures an operator acts on: a damaged log or snapshot, a refused restore or backup. No stack trace. */
function isOperatorError(error: unknown): boolean {
  const name = (error as Error | undefined)?.name;
  return name === 'CorruptRecordError' || name === 'SnapshotFileError' || name === 'RestoreError' || name === 'BackupError'
    || name === 'DataDirLockedError' || name === 'SealError' || name === 'GroupMemberError';
}

function operatorMessage(error: Error, command: string | undefined): string {
  if (error.name !== 'CorruptRecordError' || command !== 'serve') return error.message;
  return `start-up stopped: ${error.message}. Nothing after it is replayed or skipped; run "folio verify" for a full report and restore from a backup ("folio restore")`;
}
