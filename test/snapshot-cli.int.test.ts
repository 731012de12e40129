// The operator's view, through the built CLI and a child-process server: /admin/snapshots guarded by the
// master key, `folio snapshot`, `folio snapshots`, `folio backup` under write load (the backup verifies
// and serves everything acknowledged before it began), `folio restore` with its refusal, `folio verify`
// naming the broken record with a non-zero exit, and `folio serve` refusing to start on a damaged log.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { flipRecordByte, recordKeys } from './helpers/log-surgery.js';
import { sendRequest, startTestServer, tempDataDir } from './helpers/test-server.js';
import { ok, transfer as transferCommand } from './helpers/engine-rig.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/bin/folio.js');
const SECRET = 's3cret-master-key-0123456789abcdefghij';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function folio(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, FOLIO_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function transfer(server: ChildServer, destination: string, amount: number): Promise<boolean> {
  const response = await sendRequest(server.url, 'POST', '/transactions', {
    description: 'test', precise_amount: amount, currency: 'USD', source: '@world', destination, allow_overdraft: true, skip_queue: true,
  }, { 'X-svc-key': SECRET });
  return response.status === 201;
}

t.test('snapshots, backup, restore and verify from the command line', async (t) => {
  const dataDir = tempDataDir('folio-cli');
  const scratch = tempDataDir('folio-cli-out');
  t.teardown(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  });
  const server = await startChildServer(dataDir, { FOLIO_SECRET_KEY: SECRET, FOLIO_SNAPSHOT_EVERY_EVENTS: '0', FOLIO_SNAPSHOT_EVERY_SECONDS: '0' });
  t.teardown(() => server.kill());

  const missing = await sendRequest(server.url, 'POST', '/admin/snapshots');
  t.equal(missing.status, 401);
  t.equal(missing.body.error_detail.code, 'AUTH_MISSING_API_KEY');
  const wrong = await sendRequest(server.url, 'POST', '/admin/snapshots', undefined, { 'X-svc-key': 'guess' });
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error_detail.code, 'AUTH_INVALID_API_KEY');

  for (let index = 0; index < 30; index += 1) t.ok(await transfer(server, `@cli${index % 3}`, 10 + index));
  const first = await sendRequest(server.url, 'POST', '/admin/snapshots', undefined, { Authorization: `Bearer ${SECRET}` });
  t.equal(first.status, 201);
  t.equal(first.body.created, true);
  t.ok(first.body.seq > 30);

  for (let index = 0; index < 10; index += 1) await transfer(server, '@cli0', 5);
  const viaCli = await folio(['snapshot', '--url', server.url], { FOLIO_SECRET_KEY: SECRET });
  t.equal(viaCli.code, 0, viaCli.stderr);
  t.match(viaCli.stdout, /snapshot at seq \d+ written/);
  const listed = await sendRequest(server.url, 'GET', '/admin/snapshots', undefined, { 'X-svc-key': SECRET });
  t.equal(listed.body.length, 2);

  const list = await folio(['snapshots', '--data', dataDir]);
  t.equal(list.code, 0);
  t.equal(list.stdout.split('\n').filter((line) => / ok {2}snapshot-/.test(line)).length, 2, list.stdout);

  // A backup while writes keep coming: everything acknowledged before it began must be in it.
  let acknowledgedBefore = 0n;
  for (let index = 0; index < 20; index += 1) if (await transfer(server, '@backup', 100)) acknowledgedBefore += 100n;
  let writing = true;
  const load = (async () => {
    while (writing) await transfer(server, '@backup', 1);
  })();
  const backupDir = path.join(scratch, 'backup');
  const backup = await folio(['backup', '--data', dataDir, '--out', backupDir]);
  writing = false;
  await load;
  t.equal(backup.code, 0, backup.stderr);
  t.match(backup.stdout, /snapshot copied: seq/);
  const verifyBackup = await folio(['verify', '--data', backupDir]);
  t.equal(verifyBackup.code, 0, verifyBackup.stdout);
  t.match(verifyBackup.stdout, /verify: OK/);
  t.match(verifyBackup.stderr, /^replay \[#+/m, 'plain progress lines when not on a terminal');
  const sealKey = (dir: string) => fs.readFileSync(path.join(dir, 'secrets', 'hook-seal.key'));
  t.same(sealKey(backupDir), sealKey(dataDir), 'the backup carries the key hook signing secrets are sealed with');
  const onBackup = await startChildServer(backupDir);
  const backedUp = await sendRequest(onBackup.url, 'GET', '/balances/indicator/@backup/currency/USD');
  t.ok(BigInt(backedUp.body.balance) >= acknowledgedBefore, 'the backup holds every transfer acknowledged before it began');
  t.equal(await onBackup.terminate(), 0);

  const snapshotFile = first.body.file as string;
  const restoreDir = path.join(scratch, 'restored');
  const refused = await folio(['restore', '--snapshot', snapshotFile, '--data', restoreDir, '--to-seq', String(first.body.seq - 1)]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /later than --to-seq/);
  const restored = await folio(['restore', '--snapshot', snapshotFile, '--data', restoreDir, '--to-seq', String(first.body.seq + 3)]);
  t.equal(restored.code, 0, restored.stderr + restored.stdout);
  t.match(restored.stdout, new RegExp(`log up to seq ${first.body.seq + 3}`));
  t.match(restored.stdout, /verify: OK/);
  t.match(restored.stderr, /^copy \[/m);
  t.same(sealKey(restoreDir), sealKey(dataDir), 'and so does a restore');

  t.equal(await server.terminate(), 0);
  const verified = await folio(['verify', '--data', dataDir]);
  t.equal(verified.code, 0, verified.stdout);
  t.match(verified.stdout, /zero-sum USD: settled 0, inflight 0/);
});

t.test('a damaged log: verify names the record and exits 1; serve will not start', async (t) => {
  const dataDir = tempDataDir('folio-cli-bad');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startChildServer(dataDir, { FOLIO_SNAPSHOT_EVERY_EVENTS: '0', FOLIO_SNAPSHOT_EVERY_SECONDS: '0' });
  for (let index = 0; index < 12; index += 1) await transfer(server, '@bad', 1);
  t.equal(await server.terminate(), 0);
  const keys = await recordKeys(dataDir);
  const broken = keys[Math.floor(keys.length / 2)] as number;
  await flipRecordByte(dataDir, broken, 50);

  const verified = await folio(['verify', '--data', dataDir]);
  t.equal(verified.code, 1);
  t.match(verified.stdout, `FAULT log: log record ${broken} is corrupt`);
  t.match(verified.stdout, `first broken record: ${broken}`);

  const serve = await folio(['serve'], { FOLIO_DATA_DIR: dataDir, FOLIO_PORT: '0' });
  t.equal(serve.code, 1);
  t.match(serve.stderr, `start-up stopped: log record ${broken} is corrupt`);
});

t.test('folio verify read through a pipe ends with its verdict, however long its report', async (t) => {
  const dataDir = tempDataDir('folio-cli-long');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startTestServer({ dataDir, index: false });
  // One zero-sum line per currency: a report of a few hundred kilobytes, far past a pipe's buffer.
  for (let index = 0; index < 3_000; index += 1) {
    ok(server.runtime.engine.run({ op: 'transaction.create', ...transferCommand({ source: '@world', destination: '@long', currency: `CUR${index}`, allow_overdraft: true }) }));
  }
  await server.stop();
  const verified = await folio(['verify', '--data', dataDir]);
  t.equal(verified.code, 0);
  t.ok(verified.stdout.length > 100_000, `${verified.stdout.length} bytes of report`);
  t.match(verified.stdout.trimEnd().split('\n').at(-1), /^verify: OK/, 'the last line is the verdict');
});
