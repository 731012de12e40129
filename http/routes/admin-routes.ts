// Operator routes: POST /admin/snapshots writes a snapshot now and answers with it; GET /admin/snapshots
// lists those on disk. The access table (route-scopes.ts) makes both master-key only, as every route's
// access is decided there.

import type { Router } from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import type { Result } from '../../engine/result.js';
import { answers, describeRoute } from '../openapi/route-docs.js';

/** A snapshot as the API shows it. */
export interface SnapshotView {
  seq: number;
  file: string;
  size_bytes: number;
  state_hash: string;
  created_at: number;
  created?: boolean;
}

const snapshotSchema = z.object({
  seq: z.number().int(),
  file: z.string(),
  size_bytes: z.number().int(),
  state_hash: z.string(),
  created_at: z.number().int().meta({ description: 'epoch milliseconds' }),
  created: z.boolean().optional(),
}).meta({ id: 'Snapshot' });
const snapshotExample = { seq: 120, file: 'snapshot-120.fsnap', size_bytes: 48_213, state_hash: 'c'.repeat(64), created_at: 1_777_890_030_000, created: true };

/** What the routes need from the server's snapshot machinery (wired in runtime/snapshot-admin.ts). */
export interface SnapshotAdmin {
  /** Writes a snapshot of everything logged so far, or says why not (with a wait before asking again, if any). */
  snapshotNow(): Promise<Result<SnapshotView, { code: 'SNAPSHOT_UNAVAILABLE'; message: string; retry_after_seconds?: number }>>;
  list(): SnapshotView[] | Promise<SnapshotView[]>;
}

export function adminRoutes(router: Router, admin: SnapshotAdmin): void {
  describeRoute(router, 'POST /admin/snapshots', { tag: 'Operations', summary: 'Write a snapshot now', answers: answers(201, 'The snapshot', snapshotSchema, snapshotExample), errors: ['SNAPSHOT_UNAVAILABLE'] });
  router.post('/admin/snapshots', async (ctx) => {
    const taken = await admin.snapshotNow();
    if (!taken.ok) {
      // A request that waited too long behind other snapshot jobs may ask again; other failures stand.
      const retryAfter = taken.rejection.retry_after_seconds;
      throw new ApiError('SNAPSHOT_UNAVAILABLE', taken.rejection.message, undefined, retryAfter ? { 'Retry-After': String(retryAfter) } : undefined);
    }
    ctx.status = 201;
    ctx.body = taken.value;
  });

  describeRoute(router, 'GET /admin/snapshots', { tag: 'Operations', summary: 'List the snapshots on disk', answers: answers(200, 'The snapshots', z.array(snapshotSchema), [snapshotExample]) });
  router.get('/admin/snapshots', async (ctx) => {
    ctx.body = await admin.list();
  });
}
