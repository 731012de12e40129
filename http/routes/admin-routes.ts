// Operator routes: POST /admin/snapshots writes a snapshot now and answers with it; GET /admin/snapshots
// lists those on disk. The access table (route-scopes.ts) makes both master-key only, as every route's
// access is decided there.

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';

/** A snapshot as the API shows it. */
export interface SnapshotView {
  seq: number;
  file: string;
  size_bytes: number;
  state_hash: string;
  created_at: number;
  created?: boolean;
}

/** What the routes need from the server's snapshot machinery (wired in app/). */
export interface SnapshotAdmin {
  /** Writes a snapshot of everything logged so far; rejects with a message when snapshots are unavailable. */
  snapshotNow(): Promise<SnapshotView>;
  list(): SnapshotView[];
}

export function adminRoutes(router: Router, admin: SnapshotAdmin): void {
  router.post('/admin/snapshots', async (ctx) => {
    let snapshot: SnapshotView;
    try {
      snapshot = await admin.snapshotNow();
    } catch (error) {
      throw new ApiError('SNAPSHOT_UNAVAILABLE', (error as Error).message);
    }
    ctx.status = 201;
    ctx.body = snapshot;
  });

  router.get('/admin/snapshots', (ctx) => {
    ctx.body = admin.list();
  });
}
