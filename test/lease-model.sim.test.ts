// A model of the lease and term rules (replication/lease-rules.ts), checked with fast-check over random
// histories: three nodes whose clocks run at their own rates (within clock_drift_max of the database's),
// one database that holds the lease and the log and applies the rules exactly as the functions say (the
// SQL does the same), messages to it delayed by any amount or lost, each node's messages executed in the
// order it sent them (one connection), nodes that die and come back. What must hold at every moment:
//   - the log is contiguous, one record per position, terms never go down along it;
//   - every append a node was told landed is in the log, under that node's term, at that position;
//   - the database's term never goes down;
//   - no node acts as leader (its own clock before its deadline) once another term has been taken: the
//     lease's safety, which rests on the deadline being measured from the renewal's send time and cut
//     by the drift bound and the margin.
// A second property runs clocks outside the bound with no margin, and must find a counterexample: the
// model can tell a broken rule from a sound one.

import fc from 'fast-check';
import t from 'tap';
import {
  appendLands, DEFAULT_LEASE_TIMINGS, leaderDeadline, mayTakeLease, termAfter, type LeaseTimings, type LogEnd,
} from '../replication/lease-rules.js';

const NODES = 3;

interface LogRecord {
  term: number;
  first_seq: number;
  last_seq: number;
}

interface Database {
  term: number;
  holder: string;
  expires_at: number;
  log: LogRecord[];
}

interface NodeState {
  name: string;
  rate: number;
  offset: number;
  alive: boolean;
  /** Bumped when the node dies: answers to an earlier life are dropped. */
  life: number;
  held?: { term: number; deadline: number; knownEnd: LogEnd };
  renewing: boolean;
  /** When this node's connection is free again (its messages run in the order sent). */
  connectionFreeAt: number;
}

interface Acknowledged {
  node: string;
  term: number;
  first_seq: number;
}

type Action = 'tick' | 'append' | 'crash' | 'restart';

interface Step {
  advance_ms: number;
  node: number;
  action: Action;
  to_database_ms: number;
  back_ms: number;
  lost: 'none' | 'request' | 'answer';
  events: number;
}

interface Scenario {
  rates: number[];
  offsets: number[];
  steps: Step[];
}

interface Pending {
  at: number;
  order: number;
  run: () => void;
}

class World {
  now = 0;
  readonly database: Database = { term: 0, holder: '', expires_at: -Infinity, log: [] };
  readonly nodes: NodeState[];
  readonly acknowledged: Acknowledged[] = [];
  private pending: Pending[] = [];
  private order = 0;
  readonly violations: string[] = [];

  constructor(scenario: Scenario, private readonly timings: LeaseTimings) {
    this.nodes = scenario.rates.map((rate, index) => ({
      name: `n${index}`, rate, offset: scenario.offsets[index] ?? 0, alive: true, life: 0, renewing: false, connectionFreeAt: 0,
    }));
  }

  local(node: NodeState, at = this.now): number {
    return node.offset + node.rate * at;
  }

  private end(): LogEnd {
    const last = this.database.log.at(-1);
    return { last_seq: last?.last_seq ?? 0, last_first_seq: last?.first_seq ?? 0 };
  }

  private schedule(at: number, run: () => void): void {
    this.pending.push({ at, order: this.order++, run });
    this.pending.sort((a, b) => a.at - b.at || a.order - b.order);
  }

  /** Runs everything due up to `until`, checking after each. */
  advanceTo(until: number): void {
    for (;;) {
      const next = this.pending[0];
      if (!next || next.at > until) break;
      this.pending.shift();
      this.now = Math.max(this.now, next.at);
      next.run();
      this.check();
    }
    this.now = until;
    this.expireDeadlines();
    this.check();
  }

  /** A node's leader deadline passing on its own clock: it steps down (timers may run late: only here). */
  private expireDeadlines(): void {
    for (const node of this.nodes) {
      if (node.held && this.local(node) >= node.held.deadline) node.held = undefined;
    }
  }

  /** Sends `operation` to the database over the node's connection; `answer` runs when the reply is back. */
  private send<T>(node: NodeState, step: Step, operation: () => T, answer: (result: T) => void): void {
    const life = node.life;
    const executeAt = Math.max(node.connectionFreeAt, this.now + step.to_database_ms);
    node.connectionFreeAt = executeAt;
    if (step.lost === 'request') return;
    this.schedule(executeAt, () => {
      const result = operation();
      if (step.lost === 'answer') return;
      this.schedule(this.now + step.back_ms, () => {
        if (node.alive && node.life === life) answer(result);
      });
    });
  }

  act(step: Step): void {
    const node = this.nodes[step.node] as NodeState;
    if (step.action === 'crash') {
      if (!node.alive) return;
      node.alive = false;
      node.life += 1;
      node.held = undefined;
      node.renewing = false;
      return;
    }
    if (step.action === 'restart') {
      node.alive = true;
      node.connectionFreeAt = this.now;
      return;
    }
    if (!node.alive) return;
    if (step.action === 'append') {
      if (node.held) this.append(node, step);
      return;
    }
    if (node.held) this.renew(node, step);
    else this.watch(node, step);
  }

  private renew(node: NodeState, step: Step): void {
    const held = node.held;
    if (!held || node.renewing) return;
    node.renewing = true;
    const sentAt = this.local(node);
    this.send(node, step, () => {
      const database = this.database;
      if (database.term !== held.term || database.holder !== node.name) return false;
      database.expires_at = this.now + this.timings.lease_ms;
      return true;
    }, (granted) => {
      node.renewing = false;
      if (node.held !== held) return;
      if (!granted) node.held = undefined;
      else held.deadline = leaderDeadline(sentAt, this.timings); // renewals go one at a time: each sent later
    });
  }

  private watch(node: NodeState, step: Step): void {
    this.send(node, step, () => ({
      lease: { term: this.database.term, holder: this.database.holder, expires_at_ms: this.database.expires_at },
      database_now_ms: this.now,
      log_end_seq: this.end().last_seq,
    }), (seen) => {
      // A standby that has applied the log as it read it: it may try when the lease is free.
      if (!mayTakeLease({ ...seen, applied_seq: seen.log_end_seq }) || node.held) return;
      const sentAt = this.local(node);
      this.send(node, step, () => {
        const database = this.database;
        if (database.term !== seen.lease.term || !(database.holder === '' || database.expires_at <= this.now)) return undefined;
        database.term = termAfter(seen.lease);
        database.holder = node.name;
        database.expires_at = this.now + this.timings.lease_ms;
        return { term: database.term, knownEnd: this.end() };
      }, (taken) => {
        if (!taken || node.held) return;
        // The new leader reads to the end of the log before it appends (no older term can add to it now).
        node.held = { term: taken.term, deadline: leaderDeadline(sentAt, this.timings), knownEnd: this.end() };
      });
    });
  }

  private append(node: NodeState, step: Step): void {
    const held = node.held as NonNullable<NodeState['held']>;
    const append = {
      term: held.term,
      first_seq: held.knownEnd.last_seq + 1,
      last_seq: held.knownEnd.last_seq + step.events,
      previous_first_seq: held.knownEnd.last_first_seq,
    };
    held.knownEnd = { last_seq: append.last_seq, last_first_seq: append.first_seq };
    this.send(node, step, () => {
      if (!appendLands(this.database.term, this.end(), append)) return false;
      this.database.log.push({ term: append.term, first_seq: append.first_seq, last_seq: append.last_seq });
      return true;
    }, (landed) => {
      if (node.held !== held) return; // stepped down meanwhile: its waiters were refused
      if (landed) this.acknowledged.push({ node: node.name, term: held.term, first_seq: append.first_seq });
      else node.held = undefined;
    });
  }

  private lastTerm = 0;

  check(): void {
    const { log, term } = this.database;
    if (term < this.lastTerm) this.violations.push(`the database's term went from ${this.lastTerm} to ${term}`);
    this.lastTerm = term;
    for (let index = 0; index < log.length; index += 1) {
      const record = log[index] as LogRecord;
      const previous = log[index - 1];
      if (record.first_seq !== (previous?.last_seq ?? 0) + 1) this.violations.push(`record at ${record.first_seq} does not follow ${previous?.last_seq ?? 0}`);
      if (previous && record.term < previous.term) this.violations.push(`term ${record.term} at ${record.first_seq} after term ${previous.term}`);
    }
    for (const ack of this.acknowledged) {
      const record = log.find((candidate) => candidate.first_seq === ack.first_seq);
      if (!record || record.term !== ack.term) this.violations.push(`${ack.node} was told seq ${ack.first_seq} landed in term ${ack.term}; the log holds ${record ? `term ${record.term}` : 'nothing'}`);
    }
    for (const node of this.nodes) {
      if (!node.alive || !node.held) continue;
      if (this.local(node) < node.held.deadline && term !== node.held.term) {
        this.violations.push(`at ${this.now.toFixed(1)} ${node.name} acts as leader of term ${node.held.term} while term ${term} is taken`);
      }
    }
  }
}

function scenarioArbitrary(drift: number): fc.Arbitrary<Scenario> {
  const step = fc.record({
    advance_ms: fc.integer({ min: 0, max: 200 }),
    node: fc.integer({ min: 0, max: NODES - 1 }),
    action: fc.constantFrom<Action>('tick', 'tick', 'tick', 'append', 'append', 'append', 'crash', 'restart'),
    // Mostly a few milliseconds; now and then as long as the lease, or longer.
    to_database_ms: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 20 }), weight: 8 }, { arbitrary: fc.integer({ min: 0, max: 5_000 }), weight: 1 }),
    back_ms: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 20 }), weight: 8 }, { arbitrary: fc.integer({ min: 0, max: 5_000 }), weight: 1 }),
    lost: fc.constantFrom<Step['lost']>('none', 'none', 'none', 'none', 'none', 'none', 'none', 'none', 'request', 'answer'),
    events: fc.integer({ min: 1, max: 5 }),
  });
  return fc.record({
    rates: fc.array(fc.double({ min: 1 - drift, max: 1 + drift, noNaN: true }), { minLength: NODES, maxLength: NODES }),
    offsets: fc.array(fc.integer({ min: -1_000_000, max: 1_000_000 }), { minLength: NODES, maxLength: NODES }),
    steps: fc.array(step, { minLength: 20, maxLength: 300 }),
  });
}

function run(scenario: Scenario, timings: LeaseTimings): World {
  const world = new World(scenario, timings);
  for (const step of scenario.steps) {
    world.advanceTo(world.now + step.advance_ms);
    world.act(step);
    world.check();
  }
  world.advanceTo(world.now + 20_000);
  return world;
}

t.test('the lease and term rules hold under drifting clocks, late and lost messages, and crashes', async (t) => {
  const timings = DEFAULT_LEASE_TIMINGS;
  let leaders = 0;
  let appends = 0;
  fc.assert(fc.property(scenarioArbitrary(timings.clock_drift_max), (scenario) => {
    const world = run(scenario, timings);
    leaders += world.database.term;
    appends += world.acknowledged.length;
    if (world.violations.length > 0) throw new Error(world.violations.slice(0, 3).join('\n'));
  }), { numRuns: 2_000, seed: Number(process.env.FOLIO_SEED ?? 30_030) });
  t.ok(leaders > 1_000, `terms were taken (${leaders} over the runs)`);
  t.ok(appends > 1_000, `appends were acknowledged (${appends} over the runs)`);
});

t.test('the model finds the flaw when clocks drift beyond the bound and there is no margin', async (t) => {
  const timings = { ...DEFAULT_LEASE_TIMINGS, safety_margin_ms: 0 };
  const result = fc.check(fc.property(scenarioArbitrary(0.5), (scenario) => run(scenario, timings).violations.length === 0), { numRuns: 2_000, seed: 30_031 });
  t.ok(result.failed, 'a history where a leader acts after another took its term is found');
  if (result.failed && result.counterexample) {
    const [scenario] = result.counterexample as [Scenario];
    t.comment(run(scenario, timings).violations[0] ?? '');
  }
});
