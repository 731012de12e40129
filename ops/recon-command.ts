// `folio recon`: reconciliation for operators, through a running server's HTTP API.
//   folio recon upload --file FILE [--source NAME]        uploads a statement (CSV or JSON array)
//   folio recon start --upload ID --rules ID[,ID...] [--strategy S] [--grouping FIELD] [--dry-run] [--no-wait]
//                                                          starts a background run and follows it
//   folio recon status ID [--wait]                         a run's status and counts (following it with --wait)
// Each takes --url URL (else the configured address) and --config FILE. Following a run polls
// GET /reconciliation/:id and draws its progress on stderr (a bar on a terminal, plain lines otherwise).
// Exit codes: 0 done (a run that completed), 1 refused or failed (the server's error code is printed), 2
// a usage error.

import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../server/config.js';
import { Progress } from './progress.js';
import { serverUrl, serviceHeaders } from './server-address.js';
import type { OptionReader } from './snapshot-commands.js';

const POLL_INTERVAL_MS = 250;
const REQUEST_TIMEOUT_MS = 60_000;

export const RECON_USAGE = `usage: folio recon <upload|start|status> [options] [--url URL] [--config FILE]
  upload --file FILE [--source NAME]
  start --upload ID --rules ID[,ID...] [--strategy one_to_one|one_to_many|many_to_one] [--grouping FIELD]
        [--dry-run] [--no-wait]
  status ID [--wait]
`;

interface Reply {
  status: number;
  body: Record<string, any>;
}

/** The server a command talks to, with its headers. */
interface Server {
  url: string;
  headers: Record<string, string>;
}

class UsageError extends Error {
  override readonly name = 'UsageError';
}

export async function reconCommand(args: string[], option: OptionReader): Promise<number> {
  const [action, ...rest] = args;
  const config = loadConfig(option('--config'));
  const server: Server = { url: serverUrl(config, option('--url')), headers: serviceHeaders(config) };
  try {
    switch (action) {
      case 'upload':
        return await upload(server, option);
      case 'start':
        return await start(server, option, rest);
      case 'status':
        return await status(server, rest);
      case 'help':
      case '--help':
        process.stdout.write(RECON_USAGE);
        return 0;
      default:
        throw new UsageError(action === undefined ? 'a recon command is needed' : `unknown recon command ${action}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`folio recon: ${error.message}\n${RECON_USAGE}`);
      return 2;
    }
    if ((error as Error).name === 'TypeError' || (error as Error).name === 'TimeoutError') {
      process.stderr.write(`folio recon: cannot reach the server at ${server.url}: ${(error as Error).message}\n`);
      return 1;
    }
    throw error;
  }
}

function required(option: OptionReader, name: string): string {
  const value = option(name);
  if (value === undefined) throw new UsageError(`${name} is required`);
  return value;
}

async function upload(server: Server, option: OptionReader): Promise<number> {
  const file = required(option, '--file');
  let text: Buffer;
  try {
    text = fs.readFileSync(file);
  } catch (error) {
    process.stderr.write(`folio recon: cannot read ${file}: ${(error as Error).message}\n`);
    return 1;
  }
  const form = new FormData();
  const type = path.extname(file).toLowerCase() === '.json' ? 'application/json' : 'text/csv';
  form.set('file', new Blob([new Uint8Array(text)], { type }), path.basename(file));
  form.set('source', option('--source') ?? path.basename(file));
  const reply = await send(server, 'POST', '/reconciliation/upload', form);
  if (reply.status !== 201 && reply.status !== 200) return refused('upload', reply);
  out(`upload ${reply.body.upload_id}: ${reply.body.record_count} records from ${reply.body.source}`);
  return 0;
}

async function start(server: Server, option: OptionReader, args: string[]): Promise<number> {
  const body: Record<string, unknown> = {
    upload_id: required(option, '--upload'),
    strategy: option('--strategy') ?? 'one_to_one',
    matching_rule_ids: required(option, '--rules').split(',').filter((id) => id !== ''),
    dry_run: args.includes('--dry-run'),
  };
  const grouping = option('--grouping');
  if (grouping !== undefined) body.grouping_criteria = grouping;
  const reply = await send(server, 'POST', '/reconciliation/start', JSON.stringify(body));
  if (reply.status !== 201) return refused('start', reply);
  const id = reply.body.reconciliation_id as string;
  out(`reconciliation ${id} started`);
  if (args.includes('--no-wait')) return 0;
  return follow(server, id);
}

async function status(server: Server, args: string[]): Promise<number> {
  const id = args.find((arg) => !arg.startsWith('--') && !isOptionValue(args, arg));
  if (id === undefined) throw new UsageError('status needs a reconciliation id');
  if (args.includes('--wait')) return follow(server, id);
  const reply = await send(server, 'GET', `/reconciliation/${encodeURIComponent(id)}`);
  if (reply.status !== 200) return refused('status', reply);
  out(summary(reply.body));
  return reply.body.status === 'failed' ? 1 : 0;
}

/** Whether `arg` is the value of an option taking one (`--url X`, `--config X`). */
function isOptionValue(args: string[], arg: string): boolean {
  const before = args[args.indexOf(arg) - 1];
  return before === '--url' || before === '--config';
}

/** Polls the run until it has finished, drawing its progress; the exit code says how it ended. */
async function follow(server: Server, id: string): Promise<number> {
  const progress = new Progress(process.stderr, `reconciliation ${id}`, 'records');
  for (;;) {
    const reply = await send(server, 'GET', `/reconciliation/${encodeURIComponent(id)}`);
    if (reply.status !== 200) return refused('status', reply);
    const run = reply.body;
    progress.update(Number(run.processed_count), Number(run.total_count));
    if (run.status === 'completed' || run.status === 'failed') {
      progress.done(Number(run.processed_count), Number(run.total_count));
      out(summary(run));
      return run.status === 'completed' ? 0 : 1;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}

function summary(run: Record<string, any>): string {
  const lines = [
    `reconciliation ${run.reconciliation_id}: ${run.status}${run.is_dry_run ? ' (dry run)' : ''}`,
    `  strategy ${run.strategy}${run.grouping_criteria ? ` grouped by ${run.grouping_criteria}` : ''}, upload ${run.upload_id}`,
    `  processed ${run.processed_count} of ${run.total_count}: ${run.matched_transactions} matched, ${run.unmatched_transactions} unmatched`,
  ];
  if (run.failure_reason) lines.push(`  failure: ${run.failure_reason}`);
  return lines.join('\n');
}

async function send(server: Server, method: string, route: string, body?: string | FormData): Promise<Reply> {
  const headers: Record<string, string> = { ...server.headers };
  if (typeof body === 'string') headers['Content-Type'] = 'application/json';
  const response = await fetch(`${server.url}${route}`, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await response.text();
  let parsed: Record<string, any> = {};
  try {
    parsed = JSON.parse(text) as Record<string, any>;
  } catch {
    parsed = { error: text };
  }
  return { status: response.status, body: parsed };
}

function refused(what: string, reply: Reply): number {
  const detail = reply.body.error_detail as { code?: string; message?: string; details?: unknown } | undefined;
  const code = detail?.code ? `${detail.code}: ` : '';
  const message = detail?.message ?? reply.body.error ?? 'no reason given';
  const details = detail?.details === undefined ? '' : ` ${JSON.stringify(detail.details)}`;
  process.stderr.write(`folio recon: ${what} refused (${reply.status}) ${code}${message}${details}\n`);
  return 1;
}

function out(text: string): void {
  process.stdout.write(text + '\n');
}
