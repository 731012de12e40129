// Operator routes: POST /admin/snapshots writes a snapshot now and answers with it; GET /admin/snapshots
// lists those on disk. Both need the master key (server.secret_key) whenever one is configured.
//
// Until the auth middleware lands these routes check the key themselves: it may come in X-svc-key,
// X-Blnk-Key or `Authorization: Bearer`, and is compared through SHA-256 digests with timingSafeEqual,
// so the comparison takes the same time whatever the key's length or content.

import type { Router } from '@koa/router';
import { createHash, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
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

/** What the routes need from the server's snapshot machinery (wired in bin/). */
export interface SnapshotAdmin {
  /** Writes a snapshot of everything logged so far; rejects with a message when snapshots are unavailable. */
  snapshotNow(): Promise<SnapshotView>;
  list(): SnapshotView[];
}

export function adminRoutes(router: Router, admin: SnapshotAdmin, secretKey: string): void {
  const guard = requireMasterKey(secretKey);

  router.post('/admin/snapshots', guard, async (ctx) => {
    let snapshot: SnapshotView;
    try {
      snapshot = await admin.snapshotNow();
    } catch (error) {
      throw new ApiError('SNAPSHOT_UNAVAILABLE', (error as Error).message);
    }
    ctx.status = 201;
    ctx.body = snapshot;
  });

  router.get('/admin/snapshots', guard, (ctx) => {
    ctx.body = admin.list();
  });
}

function requireMasterKey(secretKey: string): Koa.Middleware {
  const expected = digest(secretKey);
  return async (ctx, next) => {
    if (secretKey === '') return next();
    const presented = presentedKey(ctx);
    if (presented === undefined) throw new ApiError('AUTH_MISSING_API_KEY', 'this route needs the master key');
    if (!timingSafeEqual(digest(presented), expected)) throw new ApiError('AUTH_INVALID_API_KEY', 'the key is not the master key');
    return next();
  };
}

function presentedKey(ctx: Koa.Context): string | undefined {
  const direct = ctx.get('x-svc-key') || ctx.get('x-blnk-key');
  if (direct !== '') return direct;
  const match = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
  return match ? match[1] : undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
