// Whether a data directory belongs to a replicated group. The mark is `node-id` in the data directory: the
// node's stable identity (the same node across restarts, replication/replication-node.ts), written durably the
// first time the node joins its group, once its local log has been aligned with the group's and before
// it applies anything of the group's. Directories made by earlier versions hold the same file (they
// wrote it at every replicated start), so they count as members too.
//
// A member's directory is never opened as a single node (LedgerRuntime.open refuses it): started without
// its group's URL it would acknowledge writes the group never sees, and rejoining would then have to
// refuse them (replication/log-alignment.ts). `folio replication leave` removes the mark, under the directory's
// lock, to make the directory an independent single-node ledger (docs/operations.md).

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDirectory } from '../snapshots/snapshot-directory.js';
import { lockDataDir } from './data-dir-lock.js';

const NODE_ID_FILE = 'node-id';

/** A group member's data directory opened as a single node. */
export class GroupMemberError extends Error {
  override readonly name = 'GroupMemberError';
}

/** The file whose presence makes `dataDir` a group member. */
export function membershipFileIn(dataDir: string): string {
  return path.join(dataDir, NODE_ID_FILE);
}

/** This data directory's node id, if it has joined a group. */
export function readNodeId(dataDir: string): string | undefined {
  try {
    const text = fs.readFileSync(membershipFileIn(dataDir), 'utf8').trim();
    return /^[0-9a-f]{16}$/.test(text) ? text : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export function isGroupMember(dataDir: string): boolean {
  return fs.existsSync(membershipFileIn(dataDir));
}

/** A node id for a directory that has none yet (kept only once the node joins: recordMembership). */
export function newNodeId(): string {
  return crypto.randomBytes(8).toString('hex');
}

/** Marks `dataDir` as a member under `nodeId`, durably (file and directory entry), unless it is one already. */
export function recordMembership(dataDir: string, nodeId: string): void {
  if (readNodeId(dataDir) === nodeId) return;
  const file = membershipFileIn(dataDir);
  const temporary = `${file}.tmp`;
  const handle = fs.openSync(temporary, 'w', 0o644);
  try {
    fs.writeSync(handle, `${nodeId}\n`);
    fs.fsyncSync(handle);
  } finally {
    fs.closeSync(handle);
  }
  fs.renameSync(temporary, file);
  fsyncDirectory(dataDir);
}

/** Refuses to open a group member's directory as a single node, saying why and what to do. */
export function refuseGroupMember(dataDir: string): void {
  if (!isGroupMember(dataDir)) return;
  throw new GroupMemberError(
    `data directory ${dataDir} belongs to a replicated group (${membershipFileIn(dataDir)} was written when it joined), `
    + 'and replication.postgres_url (FOLIO_REPLICATION_URL) is not set: served alone it would acknowledge writes its group never sees, '
    + 'and the group could not take them in. Start it with the group\'s FOLIO_REPLICATION_URL; or, to make this directory an independent '
    + `single-node ledger that leaves the group for good, run \`folio replication leave --data ${dataDir}\` (docs/operations.md)`,
  );
}

export interface LeaveReport {
  /** False when the directory was not a member (nothing changed). */
  left: boolean;
  node_id?: string;
}

/**
 * Makes `dataDir` an independent single-node ledger: removes its group membership, durably, under the
 * data directory's lock (a server running on it is refused). Its log is kept whole.
 */
export async function leaveGroup(dataDir: string): Promise<LeaveReport> {
  if (!fs.existsSync(dataDir)) throw new GroupMemberError(`there is no data directory at ${dataDir}`);
  const unlock = await lockDataDir(dataDir);
  try {
    if (!isGroupMember(dataDir)) return { left: false };
    const report: LeaveReport = { left: true };
    const nodeId = readNodeId(dataDir);
    if (nodeId) report.node_id = nodeId;
    fs.rmSync(membershipFileIn(dataDir));
    fsyncDirectory(dataDir);
    return report;
  } finally {
    await unlock();
  }
}
