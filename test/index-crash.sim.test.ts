// Crash while the index is behind: the built server (a child process) takes large bulk writes and is
// killed with SIGKILL the moment it acknowledges them, while the projector still has work queued. After a
// restart the index must catch up from its checkpoint, and the result must equal a full rebuild from the
// log by `folio reindex --offline`: the same rows in every table, the same counts, FTS consistent. The
// balance history (data/history), caught up the same way, must equal one followed from the log anew.
// Needs `npm run build` first (npm test does it).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sqlite3 from 'sqlite3';
import t from 'tap';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { HistoryFollower } from '../index/history-follower.js';
import { historyDirIn, HistoryStore } from '../index/history-store.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/bin/folio.js');
const TABLES: Array<[string, string]> = [['ledgers', 'ledger_id'], ['balances', 'balance_id'], ['transactions', 'transaction_id'], ['identities', 'identity_id']];

function query<T>(file: string, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (openError) => {
      if (openError) return reject(openError);
      db.all<T>(sql, (error, rows) => {
        db.close();
        if (error) reject(error);
        else resolve(rows);
      });
    });
  });
}

/**
 * Every row of every table (without the internal row id), the checkpoint, and an FTS integrity check
 * against the rows (a rebuild builds its full-text indexes in another process and copies them in).
 */
async function dumpIndex(file: string): Promise<Record<string, unknown>> {
  const dump: Record<string, unknown> = {};
  for (const [table, idColumn] of TABLES) {
    const rows = await query<Record<string, unknown>>(file, `SELECT * FROM ${table} ORDER BY ${idColumn}`);
    dump[table] = rows.map(({ row_id: _rowId, ...rest }) => rest);
    dump[`${table}_count`] = rows.length;
    // With rank 1 the check also compares the full-text index with the rows' own text.
    await query(file, `INSERT INTO ${table}_fts(${table}_fts, rank) VALUES('integrity-check', 1)`);
    dump[`${table}_fts_count`] = (await query<{ n: number }>(file, `SELECT count(*) AS n FROM ${table}_fts`))[0]?.n;
  }
  // Reconciliation's folded texts and their trigram index (built off to the side in a rebuild, too).
  dump.transaction_texts = await query(file, 'SELECT transaction_id, reference, description FROM transaction_texts ORDER BY transaction_id');
  await query(file, `INSERT INTO transaction_texts_fts(transaction_texts_fts, rank) VALUES('integrity-check', 1)`);
  dump.transaction_texts_found = (await query<{ n: number }>(file, `SELECT count(*) AS n FROM transaction_texts_fts WHERE reference MATCH '"crash-1"'`))[0]?.n;
  dump.checkpoint = (await query<{ value: number }>(file, `SELECT value FROM index_state WHERE key = 'checkpoint'`))[0]?.value;
  return dump;
}

/** Runs the CLI; port 1 (nothing listens there) unless a server's port is given. */
function runCli(args: string[], dataDir: string, port = '1'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, FOLIO_DATA_DIR: dataDir, FOLIO_HOST: '127.0.0.1', FOLIO_PORT: port, FOLIO_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Sends a query, retrying while the index answers 503 SRCH_INDEX_BEHIND (it is still catching up). */
async function whenCaughtUp(url: string, route: string, body: unknown, headers: Record<string, string> = {}): Promise<Awaited<ReturnType<typeof sendRequest>>> {
  for (let attempt = 0; ; attempt += 1) {
    const response = await sendRequest(url, 'POST', route, body, headers);
    if (response.status !== 503 || attempt >= 300) return response;
    if (response.body?.error_detail?.code !== 'SRCH_INDEX_BEHIND') return response;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function bulkOf(round: number, size: number): unknown {
  return {
    skip_queue: true,
    transactions: Array.from({ length: size }, (_, index) => ({
      precise_amount: 1 + index, currency: 'USD', source: '@world', destination: `@customer-${index % 300}`, allow_overdraft: true,
      reference: `crash-${round}-${index}`, description: `bulk ${round} item ${index} ${index % 7 === 0 ? 'flagged' : 'plain'}`,
      meta_data: { round, bucket: index % 10 },
    })),
  };
}

t.test('the index catches up after a crash and equals a full rebuild', async (t) => {
  t.ok(fs.existsSync(CLI), 'dist is built');
  const dataDir = tempDataDir('folio-index-crash');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  let server: ChildServer | undefined = await startChildServer(dataDir);
  t.teardown(() => server?.kill());

  const identity = await sendRequest(server.url, 'POST', '/identities', { identity_type: 'individual', first_name: 'Crash' });
  await sendRequest(server.url, 'POST', '/balances', { ledger_id: 'general_ledger_id', currency: 'USD', identity_id: identity.body.identity_id });

  let killedBehind = 0;
  let acknowledged = 0;
  for (let round = 0; round < 3; round += 1) {
    const written = await sendRequest(server.url, 'POST', '/transactions/bulk', bulkOf(round, 10_000));
    t.equal(written.status, 201, `bulk ${round} acknowledged`);
    acknowledged += 10_000;
    const status = await sendRequest(server.url, 'GET', '/search/reindex');
    await server.kill();
    if (status.body.index_lag_events > 0) killedBehind += 1;
    t.comment(`round ${round}: killed with the index ${status.body.index_lag_events} events behind`);
    server = await startChildServer(dataDir);
  }
  t.ok(killedBehind > 0, 'the server was killed at least once while the index was behind');

  // After the last restart the index catches up on its own; meanwhile queries wait, then ask to retry.
  const counted = await whenCaughtUp(server.url, '/transactions/filter', { filters: [{ field: 'reference', operator: 'like', value: 'crash-%' }], include_count: true });
  t.equal(counted.status, 200);
  t.equal(counted.body.total_count, acknowledged, 'every acknowledged transaction is in the index');
  // A search includes a seq only when asked for it: the one the count was answered at.
  const flagged = await whenCaughtUp(server.url, '/search/transactions', { q: 'flagged', per_page: 0 }, { 'X-Folio-Seq': counted.headers['x-folio-seq'] as string });
  t.equal(flagged.body.found, 3 * Math.ceil(10_000 / 7), 'full-text search agrees');
  // The full-text indexes follow the rows on their own track: both caught up before the comparison.
  let caughtUp = await sendRequest(server.url, 'GET', '/search/reindex');
  for (let tries = 0; tries < 300 && caughtUp.body.index_text_lag_events > 0; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    caughtUp = await sendRequest(server.url, 'GET', '/search/reindex');
  }
  t.equal(caughtUp.body.index_lag_events, 0);
  t.equal(caughtUp.body.index_text_lag_events, 0, 'the full-text indexes too');
  t.equal(await server.terminate(), 0, 'clean shutdown');
  server = undefined;

  const file = path.join(dataDir, 'index.sqlite');
  const incremental = await dumpIndex(file);
  const rebuilt = await runCli(['reindex', '--offline'], dataDir);
  t.equal(rebuilt.code, 0, rebuilt.stderr);
  t.match(rebuilt.stdout, /reindex 0% /, 'plain progress lines off a terminal');
  t.match(rebuilt.stdout, /reindex complete: \d+ rows from \d+ events/);
  const full = await dumpIndex(file);
  t.equal(full.transactions_count, incremental.transactions_count, 'same number of transactions');
  t.equal(full.balances_count, incremental.balances_count, 'same number of balances');
  t.equal(full.checkpoint, incremental.checkpoint, 'same checkpoint');
  t.same(full, incremental, 'the caught-up index equals a full rebuild, row for row');

  const caughtUpHistory = await dumpHistory(historyDirIn(dataDir));
  t.equal(caughtUpHistory.checkpoint, incremental.checkpoint, 'the balance history caught up to the same seq');
  fs.rmSync(historyDirIn(dataDir), { recursive: true });
  const followedAnew = await followedFromLog(dataDir);
  t.ok(followedAnew.entries.length > 1_000, `${followedAnew.entries.length} balance history entries`);
  t.same(followedAnew, caughtUpHistory, 'the caught-up balance history equals one followed from the log anew, entry for entry');
});

/** Every entry of a balance history store and its checkpoint. */
async function dumpHistory(dir: string): Promise<{ checkpoint: number; entries: string[] }> {
  const store = HistoryStore.open(dir);
  try {
    const entries = [...store.entries()].map(({ table, key, value }) => `${table} ${JSON.stringify(key)} ${value.toString('hex')}`);
    return { checkpoint: store.checkpoint().seq, entries };
  } finally {
    await store.close();
  }
}

/** A balance history followed from the whole log of a stopped server, in this process. */
async function followedFromLog(dataDir: string): Promise<{ checkpoint: number; entries: string[] }> {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir) });
  const store = HistoryStore.open(historyDirIn(dataDir));
  try {
    await new HistoryFollower(store).apply(log.read(1));
  } finally {
    await store.close();
    await log.close();
  }
  return dumpHistory(historyDirIn(dataDir));
}

t.test('a deleted index file is rebuilt from the log at start-up', async (t) => {
  const dataDir = tempDataDir('folio-index-deleted');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  let server: ChildServer | undefined = await startChildServer(dataDir);
  t.teardown(() => server?.kill());
  t.equal((await sendRequest(server.url, 'POST', '/transactions/bulk', bulkOf(9, 500))).status, 201);
  t.equal(await server.terminate(), 0);
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(dataDir, `index.sqlite${suffix}`), { force: true });
  fs.writeFileSync(path.join(dataDir, 'index.sqlite'), 'not a database');
  server = await startChildServer(dataDir);
  const counted = await whenCaughtUp(server.url, '/transactions/filter', { filters: [], include_count: true });
  t.equal(counted.body.total_count, 500, 'rebuilt from the log');
  // With a server answering at the configured address, the CLI has it rebuild itself and follows along.
  const online = await runCli(['reindex'], dataDir, new URL(server.url).port);
  t.equal(online.code, 0, online.stderr);
  t.match(online.stdout, /reindex complete: \d+ rows \(server at http:\/\/127\.0\.0\.1:\d+\)/);
  const afterOnline = await sendRequest(server.url, 'POST', '/transactions/filter', { filters: [], include_count: true });
  t.equal(afterOnline.body.total_count, 500);
  t.equal(await server.terminate(), 0);
  server = undefined;
  const offline = await runCli(['reindex'], dataDir);
  t.equal(offline.code, 0, 'with no server answering it rebuilds the file itself');
  t.match(offline.stdout, /reindex complete: 500 rows|reindex complete: \d+ rows from/);
});
