// The nemesis's parts that need no group: its schedule is a function of its seed (the same seed, the same
// faults; every kind first when asked; clocks inside the 1 % the lease assumes; pauses past the lease),
// and the injected clock (runtime/system-clock.ts) is off unless both test variables are set, ignores a
// skew it cannot trust, and continues without a jump when its rate changes.

import t from 'tap';
import { parseClockSkew, skewAt, testClockFile, type ClockSkew } from '../runtime/system-clock.js';
import { CLOCK_RATE_OFF_MAX, FAULT_KINDS, planFaults } from '../nemesis/schedule.js';

const OPTIONS = { chaos_ms: 600_000, lease_ms: 2_500, gap_ms_mean: 2_500, faults_max: 1_000 };

t.test('a seed names one schedule', async (t) => {
  for (const seed of [1, 40_001, 4_040, 2 ** 31 - 1]) {
    const plan = planFaults(seed, OPTIONS);
    t.same(planFaults(seed, OPTIONS), plan, `seed ${seed}: the same schedule twice`);
    t.notSame(planFaults(seed + 1, OPTIONS), plan, `seed ${seed}: another seed, another schedule`);
    t.ok(plan.every((fault, index) => index === 0 || fault.at_ms > plan[index - 1]!.at_ms), `seed ${seed}: faults in time order`);
    t.ok(plan.every((fault) => fault.at_ms < OPTIONS.chaos_ms), `seed ${seed}: every fault starts within the chaos`);
    for (const fault of plan) {
      if (fault.kind === 'clock' && Math.abs(fault.rate - 1) > CLOCK_RATE_OFF_MAX) t.fail(`seed ${seed}: clock rate ${fault.rate} beyond the 1 % assumed`);
      if (fault.kind === 'pause' && fault.duration_ms <= OPTIONS.lease_ms) t.fail(`seed ${seed}: a pause of ${fault.duration_ms} ms within the lease`);
    }
    t.same(planFaults(seed, { ...OPTIONS, faults_max: 7 }), plan.slice(0, 7), `seed ${seed}: --faults-max cuts the same schedule`);
    const first = planFaults(seed, { ...OPTIONS, each_kind_first: true }).slice(0, FAULT_KINDS.length).map((fault) => fault.kind);
    t.same([...first].sort(), [...FAULT_KINDS].sort(), `seed ${seed}: each kind once first (${first.join(', ')})`);
  }
});

t.test('the injected clock is off unless both test variables say otherwise', async (t) => {
  t.equal(testClockFile({}), undefined, 'no variables: off');
  t.equal(testClockFile({ FOLIO_TEST_CLOCK_FILE: '/tmp/skew.json' }), undefined, 'a file without test hooks: off');
  t.equal(testClockFile({ FOLIO_TEST_HOOKS: '1' }), undefined, 'test hooks without a file: off');
  t.equal(testClockFile({ FOLIO_TEST_HOOKS: 'true', FOLIO_TEST_CLOCK_FILE: '/tmp/skew.json' }), undefined, 'hooks must be exactly 1');
  t.equal(testClockFile({ FOLIO_TEST_HOOKS: '1', FOLIO_TEST_CLOCK_FILE: '/tmp/skew.json' }), '/tmp/skew.json', 'both: on');
});

t.test('a skew file is trusted only when whole and sane, and a new rate continues the clock', async (t) => {
  const skew: ClockSkew = { anchor_ms: 1_000_000, monotonic_offset_ms: 5, rate: 1.01, wall_offset_ms: -30_000 };
  t.same(parseClockSkew(JSON.stringify(skew)), skew, 'a whole skew is read');
  t.equal(parseClockSkew('{"anchor_ms": 1'), undefined, 'broken JSON: ignored');
  t.equal(parseClockSkew(JSON.stringify({ ...skew, rate: 0 })), undefined, 'a stopped clock: ignored');
  t.equal(parseClockSkew(JSON.stringify({ ...skew, rate: 2 })), undefined, 'a rate beyond 1.5: ignored');
  t.equal(parseClockSkew(JSON.stringify({ ...skew, wall_offset_ms: '1' })), undefined, 'a field not a number: ignored');
  t.equal(parseClockSkew('null'), undefined, 'null: ignored');
  t.equal(skewAt(skew, skew.anchor_ms), 5, 'at the anchor: the offset carried');
  t.ok(Math.abs(skewAt(skew, skew.anchor_ms + 10_000) - 105) < 1e-6, 'a 1 % fast clock gains 100 ms in 10 s');
  // The nemesis changes the rate by anchoring the new skew where the old one had got to.
  const at = skew.anchor_ms + 20_000;
  const next: ClockSkew = { anchor_ms: at, monotonic_offset_ms: skewAt(skew, at), rate: 0.99, wall_offset_ms: 0 };
  t.equal(skewAt(next, at), skewAt(skew, at), 'no jump where the rate changes');
  t.ok(skewAt(next, at + 1_000) < skewAt(next, at), 'a slow clock then falls back');
});
