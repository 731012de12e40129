// GET /admin/replication's answers (http/routes/replication-routes.ts), for a single node and for a
// replicated one alike: the node's status, what the replication node adds (phase, lease, lag), on request
// the whole group as PostgreSQL holds it (a replicated node), and on request the state hash at the seq the node stands at, after waiting (bounded) for the seq asked for.
// The hash of several nodes taken at one seq must be equal: that is what the kill test compares.

import {
  type InspectConflict, type InspectOptions, type ReplicationGroupView, type ReplicationInspection, type ReplicationInspector, type ReplicationStatus,
} from '../http/ports/replication-port.js';
import { accept, refuse, type Result } from '../engine/result.js';
import type { LedgerRuntime } from '../runtime/ledger-runtime.js';

export interface InspectedNode {
  runtime: LedgerRuntime;
  status(): ReplicationStatus;
  details?(lagWindowMs?: number): Omit<ReplicationInspection, keyof ReplicationStatus>;
  /** The whole group as PostgreSQL holds it (a replicated node). */
  group?(): Promise<ReplicationGroupView>;
}

export function nodeInspector(node: () => InspectedNode | undefined): ReplicationInspector {
  return {
    async inspect(options: InspectOptions): Promise<Result<ReplicationInspection, InspectConflict>> {
      const conflict = (message: string): { ok: false; rejection: InspectConflict } => refuse({ code: 'GEN_CONFLICT', message });
      const current = node();
      if (!current) return conflict('this node has no ledger open right now (it is rejoining its group)');
      const { runtime } = current;
      if (options.atSeq !== undefined) {
        if ((await runtime.appliedSeqReached(options.atSeq, options.waitMs)).outcome !== 'applied') {
          return conflict(`this node did not reach seq ${options.atSeq} in ${options.waitMs} ms (it stands at ${runtime.visibleSeq()})`);
        }
        if (runtime.visibleSeq() !== options.atSeq) return conflict(`this node stands at seq ${runtime.visibleSeq()}, not ${options.atSeq}`);
      }
      const inspection: ReplicationInspection = { ...current.status(), ...current.details?.(options.lagWindowMs) };
      if (options.group && current.group) {
        // The node's own account stands without it: a database that cannot be read now is said, not a failure.
        try {
          inspection.group = await current.group();
        } catch (error) {
          inspection.group_error = `the group could not be read from PostgreSQL: ${(error as Error).message}`;
        }
      }
      if (options.stateHash) {
        inspection.applied_seq = runtime.visibleSeq();
        inspection.state_hash = runtime.stateHash();
      }
      return accept(inspection);
    },
  };
}
