// The nemesis's short run (issue 40; nemesis/nemesis.ts): a real three-node group on embedded PostgreSQL
// under the mixed workload of several clients, while a seeded schedule injects one fault of each kind
// first (SIGKILL and restart, SIGSTOP of the leader past its lease, a cut of a node's link to
// PostgreSQL, a PostgreSQL restart, a clock skewed within 1 %, a full disk on a standby) and then
// whatever the seed draws; then everything is healed, the group must recover by itself, and the checker
// holds every recorded answer against the group's log and every node (docs/operations.md lists the
// checks). The seed is fixed so a run in `npm test` is one known schedule; FOLIO_NEMESIS_SEED picks
// another. A failure prints the seed, the schedule's head, every violation and the command that replays it.

import t from 'tap';
import { DEFAULT_NEMESIS_OPTIONS, formatReport, runNemesis } from '../nemesis/nemesis.js';
import { FAULT_KINDS } from '../nemesis/schedule.js';

const SEED = Number(process.env.FOLIO_NEMESIS_SEED ?? 40_001) >>> 0;
/** How long faults keep coming: with setup, healing and the checks the file stays under 2 minutes. */
const CHAOS_MS = 40_000;
const GAP_MS_MEAN = 1_800;
const CLIENTS = 4;

t.test(`nemesis: seed ${SEED}, ${CHAOS_MS / 1000} s of faults over a three-node group`, async (t) => {
  const report = await runNemesis({
    ...DEFAULT_NEMESIS_OPTIONS, seed: SEED, chaos_ms: CHAOS_MS, gap_ms_mean: GAP_MS_MEAN, clients: CLIENTS, each_kind_first: true,
    progress: (line) => t.comment(line),
  });
  const replay = `FOLIO_NEMESIS_SEED=${SEED} nice -n 10 npm test -- test/nemesis.sim.test.ts`;
  const text = formatReport(report, replay);
  t.comment(text);
  t.equal(report.violation_count, 0, `seed ${SEED}: no violations (replay: ${replay})\n${text}`);
  // A full disk is a size-capped one where the machine allows (root, loop devices, mkfs.ext4:
  // nemesis/disk-quota.ts), else write errors injected at the log (wal/injected-disk-full.ts): either way it happens.
  for (const kind of FAULT_KINDS) t.ok(report.faults[kind].done >= 1, `seed ${SEED}: a ${kind} fault was injected (disks: ${report.disks})`);
  const acknowledged = Object.values(report.check?.writes ?? {}).reduce((sum, tally) => sum + (tally?.ok ?? 0), 0);
  t.ok(acknowledged > 0, `seed ${SEED}: writes were acknowledged (${acknowledged})`);
  t.ok(report.recovery_ms.first_write !== undefined, `seed ${SEED}: the group took writes again once every fault was healed`);
});
