// POST /backup (Blnk's backup to disk) against a real server: without backup.dir it says none is
// configured; with it, each call writes a new directory under it holding a copy of the log that a
// server opens with every write made before the call.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { backupDataDir } from '../ops/backup.js';
import { expectError } from './helpers/http-fixture.js';
import { startTestServer, tempDataDir } from './helpers/test-server.js';

t.test('no backup directory: a clear 400', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  expectError(t, await server.request('POST', '/backup'), 400, 'GEN_BAD_REQUEST', 'not configured');
});

t.test('a backup while serving, opened by a new server', async (t) => {
  const backupRoot = tempDataDir('folio-backups');
  let made = 0;
  const server = await startTestServer({}, {
    backup: {
      dir: backupRoot,
      run: async () => {
        made += 1;
        const report = await backupDataDir(server.dataDir, path.join(backupRoot, `backup_${made}`));
        return { out_dir: report.outDir, log_end_seq: report.logEndSeq };
      },
    },
  });
  t.teardown(() => server.stop());
  const transfer = await server.request('POST', '/transactions', { description: 'test', precise_amount: 1234, currency: 'USD', source: '@world', destination: '@kept', allow_overdraft: true, skip_queue: true, reference: 'backup-1' });
  t.equal(transfer.status, 201);
  const answer = await server.request('POST', '/backup');
  t.equal(answer.status, 200);
  t.match(answer.body, { message: 'backup successful', out_dir: path.join(backupRoot, 'backup_1') });
  t.ok(fs.existsSync(path.join(backupRoot, 'backup_1', 'wal')), 'the log is copied');
  const restored = await startTestServer({ dataDir: path.join(backupRoot, 'backup_1') });
  t.teardown(() => restored.stop());
  t.match((await restored.request('GET', '/transactions/reference/backup-1')).body, { precise_amount: 1234 }, 'the copy has the write');
});
