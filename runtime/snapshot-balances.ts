// Balances as the state snapshots in data/snapshots hold them: where a historical balance (GET
// /balances/:id/at) may start folding instead of the log's beginning, as Blnk starts from its balance
// snapshots. A snapshot taken at log seq S counts for a moment T when the event at S was decided at or
// before T; it holds every balance as of S (or shows that the balance did not exist yet), and the fold
// goes on from S + 1. Back-dated postings cannot undo that: an effective date is never later than its
// event, so everything logged by S counts by T.
//
// The newest usable snapshot's balance table is kept (one at a time): historical reads tend to ask the
// same snapshot again, and reading and checking a large file each time would cost more than the fold.

import type { LoggedEvent } from '../engine/events.js';
import type { BalanceRecord } from '../engine/records.js';
import type { ColdBalanceTable } from '../snapshots/cold-balances.js';
import { listSnapshots } from '../snapshots/snapshot-directory.js';
import { readSnapshotAsync, snapshotBalances, SnapshotFileError } from '../snapshots/snapshot-file.js';

/** Where a fold starts: right after `seq`, from `balance` (absent: the balance did not exist at `seq`). */
export interface SnapshotStart {
  seq: number;
  balance?: BalanceRecord;
}

interface EventSource {
  read(fromSeq: number, toSeq?: number): Iterable<LoggedEvent>;
}

export class SnapshotBalances {
  private cached: { file: string; table: ColdBalanceTable } | undefined;

  constructor(private readonly dir: string, private readonly log: EventSource) {}

  /** The newest snapshot a history at `untilMs` may start from, reading no further than `toSeq`. */
  async startFor(balanceId: string, untilMs: number, toSeq: number): Promise<SnapshotStart | undefined> {
    for (const entry of listSnapshots(this.dir)) {
      if (entry.seq > toSeq || !this.decidedBy(entry.seq, untilMs)) continue;
      let table: ColdBalanceTable;
      try {
        table = await this.tableOf(entry.file);
      } catch (error) {
        if (error instanceof SnapshotFileError) continue; // damaged or pruned meanwhile: an older one may do
        throw error;
      }
      const position = table.positionOf(balanceId);
      return position < 0 ? { seq: entry.seq } : { seq: entry.seq, balance: table.read(position) };
    }
    return undefined;
  }

  /** Whether the event at `seq` was decided by `untilMs`. */
  private decidedBy(seq: number, untilMs: number): boolean {
    for (const { event } of this.log.read(seq, seq)) return event.at <= untilMs;
    return false;
  }

  private async tableOf(file: string): Promise<ColdBalanceTable> {
    if (this.cached?.file === file) return this.cached.table;
    const table = snapshotBalances(await readSnapshotAsync(file));
    this.cached = { file, table };
    return table;
  }
}
