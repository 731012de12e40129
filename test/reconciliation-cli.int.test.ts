// `folio recon upload|start|status` through the built CLI against a real server: a statement file is
// uploaded, a run is started and followed to its end (progress as plain lines, since stderr is a pipe
// here), its status is read back, and refusals come out as the server's error code with exit 1.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createRule, csvOf } from './helpers/reconciliation-client.js';
import { startScopedServer } from './helpers/scoped-server.js';
import { tempDataDir } from './helpers/test-server.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/bin/folio.js');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function folio(args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, FOLIO_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('folio recon: upload, start and follow, status, refusals', async (t) => {
  const server = await startScopedServer(t);
  const scratch = tempDataDir('folio-recon-cli');
  t.teardown(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const rows: Array<Record<string, string>> = [];
  for (let index = 0; index < 40; index += 1) {
    const response = await server.request('POST', '/transactions', {
      currency: 'USD', precise_amount: 1_000 + index, precision: 100, source: '@bank', destination: '@shop', allow_overdraft: true, skip_queue: true,
      reference: `CLI-${index}`, description: `order ${index}`,
    });
    t.equal(response.status, 201, response.text);
    rows.push({ id: `line-${index}`, amount: ((1_000 + index) / 100).toFixed(2), currency: 'USD', reference: `CLI-${index}`, description: 'x', date: response.body.created_at });
  }
  rows.push({ id: 'line-stray', amount: '1.00', currency: 'USD', reference: 'NOWHERE', description: 'x', date: rows[0]?.date as string });
  const file = path.join(scratch, 'statement.csv');
  fs.writeFileSync(file, csvOf(rows));
  const url = ['--url', server.url];

  const uploaded = await folio(['recon', 'upload', '--file', file, '--source', 'bank-cli', ...url]);
  t.equal(uploaded.code, 0, uploaded.stderr);
  const uploadId = /upload (\S+): 41 records from bank-cli/.exec(uploaded.stdout)?.[1];
  t.ok(uploadId, uploaded.stdout);

  const rule = await createRule(server, { name: 'cli', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals' }] });
  const started = await folio(['recon', 'start', '--upload', uploadId as string, '--rules', rule, ...url]);
  t.equal(started.code, 0, started.stderr);
  const id = /reconciliation (\S+) started/.exec(started.stdout)?.[1] as string;
  t.match(started.stdout, /completed/, 'followed to the end');
  t.match(started.stdout, /processed 41 of 41: 40 matched, 1 unmatched/);
  t.match(started.stderr, /41\/41 records/, 'progress lines on stderr');

  const status = await folio(['recon', 'status', id, ...url]);
  t.equal(status.code, 0, status.stderr);
  t.match(status.stdout, new RegExp(`reconciliation ${id}: completed`));
  const record = await server.request('GET', `/reconciliation/${id}`);
  t.equal(record.body.matched_transactions, 40, 'the server agrees');

  const unknown = await folio(['recon', 'status', 'recon_nope', ...url]);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /404/);
  const badRule = await folio(['recon', 'start', '--upload', uploadId as string, '--rules', 'rule_nope', ...url]);
  t.equal(badRule.code, 1);
  t.match(badRule.stderr, /RECON_RULE_NOT_FOUND|404/);
  const badFile = path.join(scratch, 'bad.csv');
  fs.writeFileSync(badFile, 'id,amount,currency,reference,description,date\nx-1,12.5.0,USD,R,d,2025-01-01T00:00:00Z\n');
  const refused = await folio(['recon', 'upload', '--file', badFile, ...url]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /400/);
  t.match(refused.stderr, /"line":2/, 'the bad line is named');
  const usage = await folio(['recon', 'start', ...url]);
  t.equal(usage.code, 2, 'a usage error');
  t.match(usage.stderr, /--upload is required/);
});
