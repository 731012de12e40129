// The planted-discrepancy corpus: 1,000 statement lines against 10,000 ledger transactions through the
// real server, for each strategy, with 1% of the lines altered: an amount off beyond the drift, a wrong
// reference (or date), a line for a transaction the ledger does not have, a line listed twice. Every
// planted line must come back unmatched, and every line that matched must be matched to exactly the
// transaction(s) it was made from: no false match.
//
// The ledger is 1,000 bulk batches of 10 transfers, each batch at its own time (ten minutes apart), so
// one_to_many can group by batch_id and find a batch by its date.

import t, { type Test } from 'tap';
import { mulberry32 } from '../bench/mulberry32.js';
import { createRule, type StatementLine } from './helpers/reconciliation-client.js';
import { startScopedServer } from './helpers/scoped-server.js';
import type { TestServer } from './helpers/test-server.js';

const BATCHES = 1_000;
const PER_BATCH = 10;
const LINES = 1_000;
const STEP_MS = 10 * 60_000;
const START_MS = Date.UTC(2025, 5, 1);

interface Made {
  id: string;
  reference: string;
  cents: number;
  batch: number;
  at: number;
}

const seed = Number(process.env.FOLIO_TEST_SEED ?? Date.now() % 1_000_000);
t.comment(`seed ${seed} (FOLIO_TEST_SEED=${seed} replays it)`);

async function ledger(t: Test): Promise<{ server: TestServer; made: Made[] }> {
  const clock = { at: START_MS, now(): number { return this.at; } };
  const server = await startScopedServer(t, { clock });
  const random = mulberry32(seed);
  const made: Made[] = [];
  for (let batch = 0; batch < BATCHES; batch += 1) {
    clock.at = START_MS + batch * STEP_MS;
    const items = Array.from({ length: PER_BATCH }, (_, index) => {
      const number = batch * PER_BATCH + index;
      return { number, cents: 100 + Math.floor(random() * 1_000_000) };
    });
    const response = await server.request('POST', '/transactions/bulk', {
      skip_queue: true,
      transactions: items.map((item) => ({
        currency: 'USD', precise_amount: item.cents, precision: 100, source: '@bank', destination: `@customer-${item.number % 97}`,
        allow_overdraft: true, reference: `INV-${item.number}`, description: `payout ${item.number}`,
      })),
    });
    if (response.status !== 201) throw new Error(`bulk: ${response.status} ${response.text}`);
    for (const item of items) made.push({ id: '', reference: `INV-${item.number}`, cents: item.cents, batch, at: clock.at });
  }
  clock.at = START_MS + BATCHES * STEP_MS;
  // Ids come from the index (the bulk answer counts them); read them back by reference.
  const filtered = new Map<string, string>();
  for (let offset = 0; offset < made.length; offset += 100) {
    const page = await server.request('POST', '/transactions/filter', { filters: [{ field: 'currency', operator: 'eq', value: 'USD' }], sort_by: 'created_at', sort_order: 'asc', limit: 100, offset });
    for (const record of page.body.data) filtered.set(record.reference, record.transaction_id);
  }
  for (const entry of made) entry.id = filtered.get(entry.reference) as string;
  return { server, made };
}

const money = (cents: number): string => (cents / 100).toFixed(2);
const iso = (at: number): string => new Date(at).toISOString();

function line(id: string, cents: number, reference: string, at: number): StatementLine {
  return { id, amount: money(cents), currency: 'USD', reference, description: 'statement', date: iso(at), source: 'bank' };
}

/** The member of a batch whose amount is furthest, relatively, from every other member's. */
function isolatedMember(members: Made[]): Made {
  const distance = (entry: Made): number => Math.min(...members.filter((other) => other !== entry).map((other) => Math.abs(other.cents - entry.cents) / entry.cents));
  const best = members.reduce((a, b) => (distance(b) > distance(a) ? b : a));
  if (distance(best) <= 0.012) throw new Error(`batch ${best.batch} has no member 1.2% away from the others; change the seed`);
  return best;
}

/** Picks `count` distinct numbers below `limit`. */
function pick(random: () => number, count: number, limit: number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(random() * limit));
  return [...chosen];
}

async function run(server: TestServer, body: Record<string, unknown>): Promise<{ matches: any[]; unmatched: any[] }> {
  const response = await server.request('POST', '/reconciliation/start-instant', { ...body, dry_run: true });
  if (response.status !== 200) throw new Error(`run: ${response.status} ${response.text.slice(0, 500)}`);
  return response.body;
}

t.test('planted discrepancies: every one found, no false match, each strategy', async (t) => {
  const { server, made } = await ledger(t);
  const random = mulberry32(seed + 1);
  const byReference = new Map(made.map((entry) => [entry.reference, entry]));

  await t.test('one_to_one, reference and exact amount', async (t) => {
    const rule = await createRule(server, { name: 'reference and amount', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals' }] });
    const chosen = pick(random, LINES - 2, made.length).map((index) => made[index] as Made);
    const lines = chosen.map((entry, index) => line(`L-${index}`, entry.cents, entry.reference, entry.at + 30_000));
    const planted = new Set<string>();
    for (const index of [0, 1, 2]) {
      (lines[index] as StatementLine).amount = money((chosen[index] as Made).cents + 100);
      planted.add(`L-${index}`);
    }
    for (const index of [3, 4, 5]) {
      (lines[index] as StatementLine).reference = `WRONG-${index}`;
      planted.add(`L-${index}`);
    }
    (lines[6] as StatementLine).reference = 'INV-9999999';
    planted.add('L-6');
    lines.push(line('L-missing', 12_345, 'INV-8888888', START_MS));
    planted.add('L-missing');
    lines.push({ ...(lines[10] as StatementLine), id: 'L-dup-a' }, { ...(lines[11] as StatementLine), id: 'L-dup-b' });
    lines.pop();
    planted.add('L-dup-a');
    lines.push({ ...(lines[11] as StatementLine), id: 'L-dup-b' });
    planted.add('L-dup-b');
    t.equal(lines.length, LINES + 1, 'the corpus');
    const result = await run(server, { external_transactions: lines, strategy: 'one_to_one', matching_rule_ids: [rule] });
    checkSingles(t, result, lines, planted, (external) => byReference.get(external.reference)?.id);
  });

  await t.test('one_to_one, amount within 0.5% and date within 2 minutes, no reference', async (t) => {
    const rule = await createRule(server, { name: 'amount and date', criteria: [
      { field: 'amount', operator: 'equals', allowable_drift: 0.005 }, { field: 'date', operator: 'equals', allowable_drift: 120 }, { field: 'currency', operator: 'equals' },
    ] });
    // One transaction per batch (batches are ten minutes apart, so no other batch shares its window),
    // the one whose amount is furthest from its batch mates': more than 1.2% away, no mate is within the
    // 0.5% drift of its line or of its altered line, so the corpus has one right answer per line.
    const chosen = pick(random, LINES, BATCHES).map((batch) => isolatedMember(made.slice(batch * PER_BATCH, (batch + 1) * PER_BATCH)));
    const lines = chosen.map((entry, index) => line(`D-${index}`, entry.cents + Math.floor(entry.cents * 0.003), `bank-${index}`, entry.at + 60_000));
    const planted = new Set<string>();
    for (const index of [0, 1, 2, 3]) {
      (lines[index] as StatementLine).amount = money(Math.ceil((chosen[index] as Made).cents * 1.0051) + 1);
      planted.add(`D-${index}`);
    }
    for (const index of [4, 5, 6]) {
      (lines[index] as StatementLine).date = iso((chosen[index] as Made).at + 121_000);
      planted.add(`D-${index}`);
    }
    (lines[7] as StatementLine).date = iso(START_MS - 86_400_000);
    planted.add('D-7');
    // Duplicates come after their originals: the first line of a pair in the file keeps the match.
    lines[LINES - 2] = { ...(lines[20] as StatementLine), id: 'D-dup-a' };
    lines[LINES - 1] = { ...(lines[21] as StatementLine), id: 'D-dup-b' };
    planted.add('D-dup-a');
    planted.add('D-dup-b');
    const expected = new Map(chosen.map((entry, index) => [`D-${index}`, entry.id]));
    const result = await run(server, { external_transactions: lines, strategy: 'one_to_one', matching_rule_ids: [rule] });
    checkSingles(t, result, lines, planted, (external) => expected.get(external.id));
  });

  await t.test('one_to_many: a line per batch (its sum, its time), grouped by batch_id', async (t) => {
    const rule = await createRule(server, { name: 'batch sum at its time', criteria: [{ field: 'amount', operator: 'equals' }, { field: 'date', operator: 'equals', allowable_drift: 60 }] });
    const batches = pick(random, LINES, BATCHES);
    const members = (batch: number): Made[] => made.slice(batch * PER_BATCH, (batch + 1) * PER_BATCH);
    const sum = (batch: number): number => members(batch).reduce((total, entry) => total + entry.cents, 0);
    const lines = batches.map((batch, index) => line(`B-${index}`, sum(batch), `payout-${batch}`, START_MS + batch * STEP_MS + 20_000));
    const planted = new Set<string>();
    for (const index of [0, 1, 2]) {
      (lines[index] as StatementLine).amount = money(sum(batches[index] as number) + 1);
      planted.add(`B-${index}`);
    }
    for (const index of [3, 4, 5]) {
      (lines[index] as StatementLine).date = iso(START_MS + (batches[index] as number) * STEP_MS + 5 * 60_000);
      planted.add(`B-${index}`);
    }
    (lines[6] as StatementLine).date = iso(START_MS + (BATCHES + 5) * STEP_MS);
    (lines[7] as StatementLine).date = iso(START_MS - STEP_MS);
    planted.add('B-6');
    planted.add('B-7');
    lines[LINES - 2] = { ...(lines[30] as StatementLine), id: 'B-dup-a' };
    lines[LINES - 1] = { ...(lines[31] as StatementLine), id: 'B-dup-b' };
    planted.add('B-dup-a');
    planted.add('B-dup-b');
    const result = await run(server, { external_transactions: lines, strategy: 'one_to_many', grouping_criteria: 'batch_id', matching_rule_ids: [rule] });
    const expected = new Map(batches.map((batch, index) => [`B-${index}`, members(batch).map((entry) => entry.id).sort()]));
    expected.set('B-dup-a', expected.get('B-30') as string[]);
    expected.set('B-dup-b', expected.get('B-31') as string[]);
    const unmatched = new Set(result.unmatched.map((entry: any) => entry.external_transaction_id));
    t.same([...planted].filter((id) => !unmatched.has(id)), [], 'every planted line is unmatched');
    t.equal(result.matches.length + result.unmatched.length, lines.length, 'matched + unmatched = the lines');
    const wrong = result.matches.filter((match: any) => JSON.stringify([...match.internal_transaction_ids].sort()) !== JSON.stringify(expected.get(match.external_transaction_id)));
    t.same(wrong, [], 'no false match: each line with all the transactions of its own batch');
    t.equal(result.matches.length, lines.length - planted.size, 'every other line matched');
  });

  await t.test('many_to_one: installments grouped by reference against their transaction', async (t) => {
    const rule = await createRule(server, { name: 'installments', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals' }] });
    const lines: StatementLine[] = [];
    const owner = new Map<string, Made>();
    for (const index of pick(random, 400, made.length)) {
      const entry = made[index] as Made;
      const parts = 1 + Math.floor(random() * 4);
      let left = entry.cents;
      for (let part = 0; part < parts && lines.length < LINES - 10; part += 1) {
        const cents = part === parts - 1 ? left : Math.floor(left / 2);
        left -= cents;
        const id = `I-${lines.length}`;
        lines.push(line(id, cents, entry.reference, entry.at + part * 1_000));
        owner.set(id, entry);
      }
      if (left !== 0) {
        // The group was cut short by the line budget: complete it so it sums.
        (lines[lines.length - 1] as StatementLine).amount = money(Number((lines[lines.length - 1] as StatementLine).amount.replace('.', '')) + left);
      }
    }
    const planted = new Set<string>();
    const alter = (index: number, change: (target: StatementLine) => void): void => {
      change(lines[index] as StatementLine);
      planted.add((lines[index] as StatementLine).id);
    };
    alter(0, (target) => (target.amount = money(Number(target.amount.replace('.', '')) + 100)));
    alter(50, (target) => (target.amount = money(Number(target.amount.replace('.', '')) + 100)));
    alter(100, (target) => (target.reference = 'WRONG-100'));
    alter(150, (target) => (target.reference = 'WRONG-150'));
    for (const [index, reference] of [[0, 'INV-7777777'], [1, 'INV-7777778']] as const) {
      const id = `I-missing-${index}`;
      lines.push(line(id, 500, reference, START_MS));
      planted.add(id);
    }
    for (const source of [200, 250, 300]) {
      const copy = { ...(lines[source] as StatementLine), id: `I-dup-${source}` };
      lines.push(copy);
      owner.set(copy.id, owner.get((lines[source] as StatementLine).id) as Made);
      planted.add(copy.id);
    }
    const result = await run(server, { external_transactions: lines, strategy: 'many_to_one', grouping_criteria: 'reference', matching_rule_ids: [rule] });
    const unmatched = new Set(result.unmatched.map((entry: any) => entry.external_transaction_id));
    t.same([...planted].filter((id) => !unmatched.has(id)), [], 'every planted line is unmatched');
    t.equal(result.matches.length + result.unmatched.length, lines.length, 'matched + unmatched = the lines');
    const wrong = result.matches.filter((match: any) => match.internal_transaction_id !== owner.get(match.external_transaction_id)?.id);
    t.same(wrong, [], 'no false match: each installment with its own transaction');
    t.ok(result.matches.length > lines.length * 0.9, `most lines matched (${result.matches.length} of ${lines.length})`);
  });
});

function checkSingles(t: Test, result: { matches: any[]; unmatched: any[] }, lines: StatementLine[], planted: Set<string>, expected: (line: StatementLine) => string | undefined): void {
  const unmatched = new Set(result.unmatched.map((entry) => entry.external_transaction_id));
  t.same([...planted].filter((id) => !unmatched.has(id)), [], 'every planted line is unmatched');
  t.equal(result.matches.length + result.unmatched.length, lines.length, 'matched + unmatched = the lines');
  const byId = new Map(lines.map((entry) => [entry.id, entry]));
  const wrong = result.matches.filter((match) => match.internal_transaction_id !== expected(byId.get(match.external_transaction_id) as StatementLine));
  t.same(wrong, [], 'no false match');
  t.equal(result.matches.length, lines.length - planted.size, 'every other line matched');
  const internal = result.matches.map((match) => match.internal_transaction_id);
  t.equal(new Set(internal).size, internal.length, 'no transaction matched twice');
}
