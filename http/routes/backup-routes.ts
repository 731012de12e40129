// Blnk's backup to disk: `POST /backup` (and `GET /backup`, as Blnk's own router has it) copies the data
// directory while the server runs (ops/backup.ts: the newest snapshot and a consistent copy of the log)
// into a new directory under the configured `backup.dir`, and answers "backup successful" once it is
// there. Master key only: it acts on the server. Backups to S3 are not offered (docs/decisions-blnk.md).

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import { answers, describeRoute } from '../openapi/route-docs.js';

/** What the routes need to make a backup (wired in server/serve-parts.ts to ops/backup.ts). */
export interface BackupPort {
  /** Where backups go; undefined when none is configured. */
  readonly dir: string | undefined;
  /** Copies the data directory into a new directory under `dir`. */
  run(): Promise<{ out_dir: string; log_end_seq: number }>;
}

export function backupRoutes(router: Router, backup: BackupPort): void {
  const handler = async (ctx: Koa.Context): Promise<void> => {
    if (backup.dir === undefined) throw new ApiError('GEN_BAD_REQUEST', 'no backup directory is configured: set backup.dir (FOLIO_BACKUP_DIR)');
    let report: { out_dir: string; log_end_seq: number };
    try {
      report = await backup.run();
    } catch (error) {
      throw new ApiError('ADMIN_BACKUP_FAILED', `error creating backup: ${(error as Error).message}`);
    }
    ctx.status = 200;
    ctx.body = { message: 'backup successful', out_dir: report.out_dir, log_end_seq: report.log_end_seq };
  };
  const doc = {
    tag: 'Operations', summary: 'Copy the data directory into a new directory under backup.dir, while serving',
    answers: answers(200, 'Done', z.object({ message: z.string(), out_dir: z.string(), log_end_seq: z.number().int() })),
    errors: ['GEN_BAD_REQUEST', 'ADMIN_BACKUP_FAILED'] as const,
  };
  describeRoute(router, 'POST /backup', doc);
  router.post('/backup', handler);
  describeRoute(router, 'GET /backup', { ...doc, summary: `${doc.summary} (GET, as Blnk's router has it)` });
  router.get('/backup', handler);
}
