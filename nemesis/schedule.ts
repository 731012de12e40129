// The fault schedule of a nemesis run, drawn from its seed before the run begins: when each fault
// starts (from the start of the chaos), what kind it is, which node it aims at (by role, resolved when it
// starts: "the leader" is whichever node leads then), how long until it is healed, and its kind's
// details. The same seed and options give the same schedule; what the system does in between (who leads
// when, which writes are in flight) varies with timing, which no seed fixes (docs/operations.md).
//
// Kinds (nemesis/faults.ts carries them out):
//   kill      SIGKILL a node, start it again after `duration_ms` on the same data directory
//   pause     SIGSTOP the leader for longer than its lease, then SIGCONT
//   cut       stop every byte between a node and PostgreSQL (bench/replication/tcp-relay.ts), then deliver
//             what was held or drop it with the connections
//   postgres  stop PostgreSQL (fast: SIGINT, or immediate: SIGQUIT, a crash) and start it again
//   clock     set a node's clocks to run up to 0.95 % fast or slow (within the 1 % the lease assumes) and
//             step its wall clock by up to 30 s either way; back to the real rate when healed
//   disk      fill a standby's data disk (a size-capped file system), then free it

import { Seeded } from './seeded.js';

export const FAULT_KINDS = ['kill', 'pause', 'cut', 'postgres', 'clock', 'disk'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type FaultTarget = 'leader' | 'standby' | 'any';

interface Planned {
  /** Its place in the schedule, from 0. */
  index: number;
  /** From the start of the chaos. */
  at_ms: number;
  target: FaultTarget;
  /** Which of the nodes that fit the target (sorted by name): the one at this fraction of the list. */
  pick: number;
  /** How long the fault lasts before it is healed. */
  duration_ms: number;
}

export type PlannedFault = Planned & (
  | { kind: 'kill' }
  | { kind: 'pause' }
  | { kind: 'cut'; heal: 'deliver' | 'reset' }
  | { kind: 'postgres'; stop: 'fast' | 'immediate' }
  | { kind: 'clock'; rate: number; wall_step_ms: number }
  | { kind: 'disk' }
);

export interface ScheduleOptions {
  /** How long faults keep starting. */
  chaos_ms: number;
  /** The group's lease: pauses outlast it, cuts straddle it. */
  lease_ms: number;
  /** Mean time between the starts of two faults. */
  gap_ms_mean: number;
  /** No more faults than this. */
  faults_max: number;
  /**
   * The first faults are one of each kind, in a seeded order, before the weighted draw takes over: a
   * short run (the one in `npm test`) then covers every kind whatever its seed.
   */
  each_kind_first?: boolean;
}

const WEIGHTS: Record<FaultKind, number> = { kill: 22, pause: 16, cut: 22, postgres: 8, clock: 16, disk: 10 };
/** A clock runs at most this far from real time: inside the 1 % drift the lease rules assume. */
export const CLOCK_RATE_OFF_MAX = 0.0095;
export const CLOCK_WALL_STEP_MS_MAX = 30_000;
/** The first fault waits for the group to settle and the writes to flow. */
const FIRST_FAULT_MS = { min: 1_000, max: 3_000 };

export function planFaults(seed: number, options: ScheduleOptions): PlannedFault[] {
  const random = Seeded.derive(seed, 1_000_000);
  const faults: PlannedFault[] = [];
  const lease = options.lease_ms;
  let at = random.between(FIRST_FAULT_MS.min, FIRST_FAULT_MS.max);
  const firstKinds: FaultKind[] = [];
  if (options.each_kind_first) {
    const left = [...FAULT_KINDS];
    while (left.length > 0) firstKinds.push(left.splice(Math.floor(random.fraction() * left.length), 1)[0]!);
  }
  while (at < options.chaos_ms && faults.length < options.faults_max) {
    const kind = firstKinds.shift() ?? random.weighted(WEIGHTS);
    const base = { index: faults.length, at_ms: at, pick: random.fraction() };
    switch (kind) {
      case 'kill':
        faults.push({ ...base, kind, target: random.chance(0.4) ? 'leader' : 'any', duration_ms: random.between(300, 6_000) });
        break;
      case 'pause':
        faults.push({ ...base, kind, target: 'leader', duration_ms: random.between(Math.round(lease * 1.2), Math.round(lease * 2.4)) });
        break;
      case 'cut':
        faults.push({
          ...base, kind, target: random.chance(0.5) ? 'leader' : 'any', duration_ms: random.between(Math.round(lease * 0.3), lease * 3),
          heal: random.chance(0.5) ? 'deliver' : 'reset',
        });
        break;
      case 'postgres':
        faults.push({ ...base, kind, target: 'any', duration_ms: random.between(300, 5_000), stop: random.chance(0.5) ? 'fast' : 'immediate' });
        break;
      case 'clock': {
        const rate = 1 + (random.fraction() * 2 - 1) * CLOCK_RATE_OFF_MAX;
        const wallStep = Math.round((random.fraction() * 2 - 1) * CLOCK_WALL_STEP_MS_MAX);
        faults.push({ ...base, kind, target: random.chance(0.5) ? 'leader' : 'any', duration_ms: random.between(3_000, 20_000), rate, wall_step_ms: wallStep });
        break;
      }
      case 'disk':
        faults.push({ ...base, kind, target: 'standby', duration_ms: random.between(2_000, 10_000) });
        break;
    }
    at += random.between(Math.round(options.gap_ms_mean / 3), Math.round((options.gap_ms_mean * 5) / 3));
  }
  return faults;
}

/** One line per fault, for a report or a failure message. */
export function describeFault(fault: PlannedFault): string {
  const details = fault.kind === 'cut' ? ` heal=${fault.heal}`
    : fault.kind === 'postgres' ? ` stop=${fault.stop}`
      : fault.kind === 'clock' ? ` rate=${fault.rate.toFixed(5)} wall_step_ms=${fault.wall_step_ms}`
        : '';
  return `#${fault.index} at ${fault.at_ms} ms: ${fault.kind} ${fault.kind === 'postgres' ? '' : `${fault.target} `}for ${fault.duration_ms} ms${details}`;
}
