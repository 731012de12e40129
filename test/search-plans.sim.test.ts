// The search executor picks among several plans (issue 17): the last word matched exactly when no other
// term starts with it, the words checked row by row when the indexed filter clauses hold few rows, a
// page read down a sort index instead of sorting every filtered row. None may change an answer. On a
// seeded random ledger (words that are prefixes of others, busy and quiet balances, statuses, amounts,
// times), every random search is answered by runSearch and by the plain reading of the request (the
// prefix expression, the filters, the order; ranked when the words match few records) written as one
// SQL query per answer: `found` and the page's rows must be the same. A single common word, whose count
// is read from the vocabulary and then kept, is checked against the match's own count as the index changes.
// filter_by with `||` and parentheses, facet_by and group_by (issue 29) are checked against a reading
// of their own: each clause's records found alone, combined in JavaScript as Typesense groups `&&` and
// `||` (same precedence, from the left); the counts and groups worked out in JavaScript from the values
// of every record found, in the plain query's order.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { IndexStore } from '../index/index-store.js';
import { buildIndexFile } from '../index/secondary-index.js';
import { ftsTable, LAYOUTS, ROW_ID, secondCountsTable } from '../index/index-schema.js';
import { Projector, type LogSource } from '../index/projector.js';
import { compileSearch, RANK_MATCHES_MAX, type SearchPlan } from '../index/search-compiler.js';
import { amountFromKey } from '../index/sortable-amount.js';
import { runSearch } from '../index/search-executor.js';
import type { SqliteConnection, SqlValue } from '../index/sqlite-connection.js';
import { engineRig, transfer } from './helpers/engine-rig.js';
import { SeededRandom, seededTest, seedsToRun } from './helpers/seeded-random.js';

const TRANSFERS = 3_000;
const SEARCHES = 300;
/** Words, some the start of others, some common, some rare. */
const WORDS = ['cof', 'coffee', 'coffees', 'rent', 'rental', 'salary', 'fee', 'feel', 'tax', 'zebra', 'x-ray', 'naïve', 'naive', 'a_b'];

async function oracle(reader: SqliteConnection, collection: 'transactions', plan: SearchPlan): Promise<{ found: number; ids: number[] }> {
  const table = LAYOUTS[collection].table;
  const fts = ftsTable(collection);
  const where = plan.where.sql === '' ? '1' : plan.where.sql;
  if (plan.match === undefined) {
    const found = (await reader.all<{ n: number }>(`SELECT count(*) AS n FROM ${table} t WHERE ${where}`, plan.where.params))[0]!.n;
    const ids = await reader.all<{ id: number }>(`SELECT t.${ROW_ID} AS id FROM ${table} t WHERE ${where} ORDER BY ${plan.order} LIMIT ? OFFSET ?`, [...plan.where.params, plan.limit, plan.offset]);
    return { found, ids: ids.map((row) => row.id) };
  }
  const matches = (await reader.all<{ n: number }>(`SELECT count(*) AS n FROM ${fts} WHERE ${fts} MATCH ?`, [plan.match]))[0]!.n;
  const found = (await reader.all<{ n: number }>(
    `SELECT count(*) AS n FROM ${table} t WHERE ${where} AND t.${ROW_ID} IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?)`, [...plan.where.params, plan.match],
  ))[0]!.n;
  const ranked = plan.relevance !== undefined && matches <= RANK_MATCHES_MAX;
  const ids = ranked
    ? await reader.all<{ id: number }>(
      `SELECT f.rowid AS id FROM ${fts} f JOIN ${table} t ON t.${ROW_ID} = f.rowid WHERE ${fts} MATCH ? AND ${where} ORDER BY f.rank ${plan.relevance}, f.rowid DESC LIMIT ? OFFSET ?`,
      [plan.match, ...plan.where.params, plan.limit, plan.offset],
    )
    : await reader.all<{ id: number }>(
      `SELECT t.${ROW_ID} AS id FROM ${table} t WHERE ${where} AND t.${ROW_ID} IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?) ORDER BY ${plan.order} LIMIT ? OFFSET ?`,
      [...plan.where.params, plan.match, plan.limit, plan.offset],
    );
  return { found, ids: ids.map((row) => row.id) };
}

// A word in more records than are ranked has its `found` counted from the vocabulary, not by the match,
// and then kept: a later search of the word counts only the records added since, unless searched text
// was changed or deleted in between. Each answer must be the match's own count, as records are added, as
// metadata changes take the word out of some records and put it into others, and as identities go.
void seededTest(t, 'one common word is counted as the match counts it', 11, async (t, random) => {
  const rig = engineRig();
  const ids: string[] = [];
  const transfers = (count: number): void => {
    // Every record has `fee`, and `coffee` at first; later notes take `coffee` out of some and put `tax` in.
    for (let index = 0; index < count; index += 1) {
      const outcome = rig.engine.run({ op: 'transaction.create', ...transfer({
        source: '@a', destination: '@b', allow_overdraft: true, precise_amount: 1n,
        description: random.pick(['fee', 'fee rent', 'fee rental']), meta_data: { note: 'coffee' }, reference: `ref-${ids.length}`,
      }) });
      if (!outcome.ok) throw new Error(outcome.rejection.message);
      ids.push(outcome.value.transaction.transaction_id);
    }
  };
  const notes = (count: number): void => {
    for (let index = 0; index < count; index += 1) {
      const changed = rig.engine.run({ op: 'metadata.update', entity_id: random.pick(ids), meta_data: { note: random.pick(['tax', 'coffee', 'tea']) } });
      if (!changed.ok) throw new Error(changed.rejection.message);
    }
  };
  const identities = (count: number): string[] => Array.from({ length: count }, (_, index): string => {
    const created = rig.engine.run({ op: 'identity.create', fields: {
      identity_type: 'individual', organization_name: '', first_name: `F${index}`, last_name: 'L', other_names: '', gender: '',
      dob: 0, email_address: '', phone_number: '', nationality: '', category: '', street: '', city: '', state: '', country: '',
      post_code: '', meta_data: { note: 'coffee' },
    } });
    if (!created.ok) throw new Error(created.rejection.message);
    return created.value.identity_id;
  });
  transfers(RANK_MATCHES_MAX + 3_000);
  const people = identities(RANK_MATCHES_MAX + 500);
  const index = await indexOf(t, rig);
  const compare = async (step: string): Promise<void> => {
    for (const [collection, word] of [['transactions', 'fee'], ['transactions', 'coffee'], ['transactions', 'tax'], ['transactions', 'rent'], ['transactions', 'absent'], ['identities', 'coffee']] as const) {
      const compiled = compileSearch(collection, { q: word, filter_by: '', sort_by: '', page: 1, per_page: 10 });
      if (!compiled.ok) throw new Error(compiled.message);
      const answered = await index.readers.read((reader) => runSearch(reader, collection, compiled.value));
      const expected = await index.readers.read((reader) => matchCount(reader, collection, compiled.value.match as string));
      t.equal(answered.found, expected, `${step}: ${collection} q=${word} found ${expected}`);
    }
  };
  await compare('first count');
  await compare('counted again, nothing new');
  transfers(700);
  await index.catchUp();
  await compare('records added');
  notes(1_500);
  await index.catchUp();
  await compare('notes changed');
  transfers(300);
  for (const identityId of people.slice(0, 400)) {
    const deleted = rig.engine.run({ op: 'identity.delete', identity_id: identityId });
    if (!deleted.ok) throw new Error(deleted.rejection.message);
  }
  await index.catchUp();
  await compare('records added, identities deleted');
});

for (const seed of seedsToRun([5, 23])) {
  void seededTest(t, 'every search plan answers what the plain query answers', seed, async (t, random) => {
    const rig = engineRig();
    const quiet = Array.from({ length: 40 }, (_, index) => `@quiet-${index}`);
    const sentence = (): string => Array.from({ length: random.int(1, 4) }, () => random.pick(WORDS)).join(' ');
    for (let index = 0; index < TRANSFERS; index += 1) {
      if (random.chance(0.3)) rig.clock.ms += random.int(0, 3_000);
      const from = random.chance(0.4) ? '@busy' : random.pick(quiet);
      let to = random.pick(quiet.concat(['@sink']));
      while (to === from) to = random.pick(quiet);
      const outcome = rig.engine.run({ op: 'transaction.create', ...transfer({
        source: from, destination: to, allow_overdraft: true,
        precise_amount: BigInt(random.int(1, 5_000)), inflight: random.chance(0.2), description: sentence(),
        meta_data: random.chance(0.3) ? { note: sentence() } : {}, reference: `ref-${index}`,
      }) });
      if (!outcome.ok) throw new Error(outcome.rejection.message);
    }
    const { readers } = await indexOf(t, rig);

    const balanceOf = (name: string): string => rig.engine.state.balanceByIndicator(name, 'USD')?.balance_id as string;
    const times = [...rig.log.read(1)].map((logged) => Math.floor(logged.event.at / 1000));
    const clause = (): string => {
      switch (random.int(0, 5)) {
        case 0: return `source:=${balanceOf('@busy')}`;
        case 1: return `source:=${balanceOf(random.pick(quiet))}`;
        case 2: return `status:=${random.pick(['APPLIED', 'INFLIGHT'])}`;
        case 3: {
          const from = random.pick(times);
          return `created_at:[${from}..${from + random.int(0, 20)}]`;
        }
        case 4: return `precise_amount:>${random.int(1, 5_000)}`;
        default: return `destination:[${balanceOf(random.pick(quiet))},${balanceOf('@sink')}]`;
      }
    };
    const sorts = ['', 'precise_amount:desc', 'precise_amount:asc', 'created_at:asc', '_text_match:desc,precise_amount:asc', 'reference:asc', 'source:desc'];
    let compared = 0;
    const wrong: string[] = [];
    for (let index = 0; index < SEARCHES; index += 1) {
      const q = random.chance(0.3) ? '*' : Array.from({ length: random.int(1, 2) }, () => random.pick(WORDS)).join(' ');
      const request = {
        q, filter_by: Array.from({ length: random.int(0, 2) }, clause).join(' && '), sort_by: random.pick(sorts),
        page: random.int(1, 4), per_page: random.pick([0, 1, 10, 50]),
      };
      const compiled = compileSearch('transactions', request);
      if (!compiled.ok) throw new Error(`${JSON.stringify(request)}: ${compiled.message}`);
      const answered = await readers.read((reader) => runSearch(reader, 'transactions', compiled.value));
      const expected = await readers.read((reader) => oracle(reader, 'transactions', compiled.value));
      const got = { found: answered.found, ids: answered.rows.map((row) => row.transaction_id) };
      const want = { found: expected.found, ids: await transactionIds(readers, expected.ids) };
      compared += 1;
      if (wrong.length < 5 && JSON.stringify(got) !== JSON.stringify(want)) wrong.push(`${JSON.stringify(request)}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
    t.same(wrong, [], `${compared} searches answered as the plain query answers them`);
  });
}

/** A filter expression: a clause, or `||`/`&&` over parts, written with or without parentheses. */
type Expression = { clause: string } | { operator: '&&' | '||'; parts: Expression[]; grouped: boolean };

/** The text of an expression; ungrouped parts are written bare, so Typesense's left-to-right reading applies. */
function expressionText(expression: Expression): string {
  if ('clause' in expression) return expression.clause;
  const text = expression.parts.map(expressionText).join(` ${expression.operator} `);
  return expression.grouped ? `(${text})` : text;
}

/**
 * The records an expression keeps, read as Typesense reads its text: the tokens of an ungrouped
 * expression (a sequence of parts and operators, nested ungrouped ones flattened into it) are combined
 * strictly from the left.
 */
function keptBy(expression: Expression, clauseSets: Map<string, Set<number>>): Set<number> {
  if ('clause' in expression) return clauseSets.get(expression.clause) as Set<number>;
  const tokens: Array<Expression | '&&' | '||'> = [];
  const flatten = (part: Expression): void => {
    if ('clause' in part || part.grouped) {
      tokens.push(part);
      return;
    }
    part.parts.forEach((inner, index) => {
      if (index > 0) tokens.push(part.operator);
      flatten(inner);
    });
  };
  expression.parts.forEach((part, index) => {
    if (index > 0) tokens.push(expression.operator);
    flatten(part);
  });
  const operand = (token: Expression): Set<number> => ('clause' in token || !token.grouped ? keptBy(token, clauseSets) : keptBy({ ...token, grouped: false }, clauseSets));
  let kept = operand(tokens[0] as Expression);
  for (let index = 1; index < tokens.length; index += 2) {
    const next = operand(tokens[index + 1] as Expression);
    kept = tokens[index] === '&&' ? new Set([...kept].filter((id) => next.has(id))) : new Set([...kept, ...next]);
  }
  return kept;
}

void seededTest(t, 'filter_by with ||, facet_by and group_by answer what their plain reading answers', 41, async (t, random) => {
  const rig = engineRig();
  const quiet = Array.from({ length: 12 }, (_, index) => `@q-${index}`);
  const sentence = (): string => Array.from({ length: random.int(1, 3) }, () => random.pick(WORDS)).join(' ');
  for (let index = 0; index < 1_500; index += 1) {
    if (random.chance(0.3)) rig.clock.ms += random.int(0, 3_000);
    const from = random.chance(0.3) ? '@busy' : random.pick(quiet);
    let to = random.pick(quiet);
    while (to === from) to = random.pick(quiet);
    // The metadata key `kind` is text, a number, a flag, an object, or missing: every kind of value.
    const kind = random.pick<unknown>(['a', 'b', 'c', 7, true, { x: 1 }, undefined, undefined]);
    const outcome = rig.engine.run({ op: 'transaction.create', ...transfer({
      source: from, destination: to, allow_overdraft: true, precise_amount: BigInt(random.int(1, 40)),
      inflight: random.chance(0.2), description: sentence(), reference: `ref-${index}`,
      meta_data: kind === undefined ? { note: sentence() } : { note: sentence(), kind } as never,
    }) });
    if (!outcome.ok) throw new Error(outcome.rejection.message);
  }
  const { readers } = await indexOf(t, rig);
  const balanceOf = (name: string): string => rig.engine.state.balanceByIndicator(name, 'USD')?.balance_id as string;
  const clause = (): string => {
    switch (random.int(0, 6)) {
      case 0: return `source:=${balanceOf('@busy')}`;
      case 1: return `destination:=${balanceOf(random.pick(quiet))}`;
      case 2: return `status:=${random.pick(['APPLIED', 'INFLIGHT'])}`;
      case 3: return `precise_amount:${random.pick(['>', '<', '>=', '<='])}${random.int(1, 40)}`;
      case 4: return `meta_data.kind:=${random.pick(['a', 'b', 'c'])}`;
      case 5: return `source:=[${balanceOf(random.pick(quiet))},${balanceOf(random.pick(quiet))}]`;
      default: return `precise_amount:[${random.int(1, 20)}..${random.int(15, 40)}]`;
    }
  };
  const expression = (depth: number): Expression => {
    if (depth === 0 || random.chance(0.35)) return { clause: clause() };
    return { operator: random.pick(['&&', '||'] as const), parts: Array.from({ length: random.int(2, 3) }, () => expression(depth - 1)), grouped: random.chance(0.5) };
  };
  const table = LAYOUTS.transactions.table;
  const idsOf = async (filter_by: string): Promise<Set<number>> => {
    const compiled = compileSearch('transactions', { q: '*', filter_by, sort_by: '', page: 1, per_page: 0 });
    if (!compiled.ok) throw new Error(`${filter_by}: ${compiled.message}`);
    const where = compiled.value.where;
    const rows = await readers.read((reader) => reader.all<{ id: number }>(`SELECT t.${ROW_ID} AS id FROM ${table} t WHERE ${where.sql}`, where.params));
    return new Set(rows.map((row) => row.id));
  };
  const facetFields = ['status', 'source', 'precise_amount', 'inflight', 'meta_data.kind', 'description'];
  const groupFields = ['status', 'destination', 'meta_data.kind', 'inflight'];
  const wrong: string[] = [];
  let compared = 0;
  for (let index = 0; index < 150; index += 1) {
    const tree = expression(3);
    const filter_by = expressionText(tree);
    const clauseSets = new Map<string, Set<number>>();
    const leaves: string[] = [];
    const collect = (part: Expression): void => ('clause' in part ? void leaves.push(part.clause) : part.parts.forEach(collect));
    collect(tree);
    for (const leaf of leaves) if (!clauseSets.has(leaf)) clauseSets.set(leaf, await idsOf(leaf));
    const kept = keptBy(tree, clauseSets);
    const q = random.chance(0.4) ? '*' : random.pick(WORDS);
    const request = {
      q, filter_by, sort_by: random.pick(['', 'precise_amount:desc', 'created_at:asc', '_text_match:desc,precise_amount:asc']),
      page: random.int(1, 3), per_page: random.pick([0, 3, 10]),
      facet_by: random.chance(0.5) ? [...new Set([random.pick(facetFields), random.pick(facetFields)])].join(',') : undefined,
      max_facet_values: random.pick([1, 3, 10]),
      group_by: random.chance(0.4) ? [...new Set([random.pick(groupFields), random.pick(groupFields)])].join(',') : undefined,
      group_limit: random.pick([1, 2, 5]), group_missing_values: random.chance(0.7),
    };
    const compiled = compileSearch('transactions', request);
    if (!compiled.ok) throw new Error(`${JSON.stringify(request)}: ${compiled.message}`);
    const plan = compiled.value;
    const answered = await readers.read((reader) => runSearch(reader, 'transactions', plan));
    // The plain reading: the records the expression keeps, in the plain query's order, all of them.
    const keptPlan: SearchPlan = { ...plan, where: { sql: `t.${ROW_ID} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify([...kept])] }, limit: 1_000_000, offset: 0 };
    const all = await readers.read((reader) => oracle(reader, 'transactions', keptPlan));
    const values = await readers.read((reader) => rowValues(reader, all.ids, [...new Set([...(request.facet_by?.split(',') ?? []), ...(request.group_by?.split(',') ?? [])])]));
    const expected: Record<string, unknown> = {};
    const got: Record<string, unknown> = {};
    if (request.group_by === undefined) {
      expected.found = all.found;
      expected.page = await transactionIds(readers, all.ids.slice(plan.offset, plan.offset + plan.limit));
      got.found = answered.found;
      got.page = answered.rows.map((row) => row.transaction_id);
    } else {
      const groups = groupsOf(all.ids, values, request.group_by.split(','), request.group_missing_values);
      expected.found = groups.length;
      expected.groups = await Promise.all(groups.slice(plan.offset, plan.offset + plan.limit).map(async (ids) => [ids.length, await transactionIds(readers, ids.slice(0, request.group_limit))]));
      got.found = answered.found;
      got.groups = (answered.groups ?? []).map((group) => [group.found, group.rows.map((row) => row.transaction_id)]);
    }
    if (request.facet_by !== undefined) {
      expected.facets = request.facet_by.split(',').map((field) => facetOf(field, all.ids, values, request.max_facet_values));
      got.facets = (answered.facets ?? []).map((facet) => [facet.total_values, facet.counts.map((count) => [count.value, count.count])]);
    }
    compared += 1;
    if (wrong.length < 5 && JSON.stringify(got) !== JSON.stringify(expected)) wrong.push(`${JSON.stringify(request)}: got ${JSON.stringify(got)}, want ${JSON.stringify(expected)}`);
  }
  t.same(wrong, [], `${compared} searches with ||, facets and groups answered as their plain reading`);
});

/** Each record's stored value of each field (metadata: its JSON type and value), by row id. */
async function rowValues(reader: SqliteConnection, ids: number[], fields: string[]): Promise<Map<number, Record<string, { kind: string; value: SqlValue } | undefined>>> {
  const byId = new Map<number, Record<string, { kind: string; value: SqlValue } | undefined>>();
  const rows = await reader.all<Record<string, SqlValue>>(`SELECT * FROM transactions WHERE ${ROW_ID} IN (SELECT value FROM json_each(?))`, [JSON.stringify(ids)]);
  for (const row of rows) {
    const entry: Record<string, { kind: string; value: SqlValue } | undefined> = {};
    for (const field of fields) {
      if (!field.startsWith('meta_data.')) {
        entry[field] = { kind: 'column', value: row[field] as SqlValue };
        continue;
      }
      const meta = JSON.parse(String(row.meta_data)) as Record<string, unknown>;
      const value = meta[field.slice('meta_data.'.length)];
      if (value === undefined || value === null) entry[field] = undefined;
      else if (typeof value === 'boolean') entry[field] = { kind: String(value), value: value ? 1 : 0 };
      else if (typeof value === 'object') entry[field] = { kind: 'object', value: JSON.stringify(value) };
      else entry[field] = { kind: typeof value === 'number' ? 'integer' : 'text', value: value as SqlValue };
    }
    byId.set(row[ROW_ID] as number, entry);
  }
  return byId;
}

/** SQLite's order of stored values: numbers before text, text by its bytes. */
function storedOrder(left: SqlValue, right: SqlValue): number {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  if (typeof left === 'number') return -1;
  if (typeof right === 'number') return 1;
  return Buffer.compare(Buffer.from(String(left)), Buffer.from(String(right)));
}

/** A facet by hand: the values records have (no empty text, no objects, no missing), commonest first, ties by value. */
function facetOf(field: string, ids: number[], values: Map<number, Record<string, { kind: string; value: SqlValue } | undefined>>, max: number): unknown {
  const counts = new Map<string, { value: SqlValue; kind: string; count: number }>();
  for (const id of ids) {
    const entry = values.get(id)?.[field];
    if (entry === undefined || entry.kind === 'object' || entry.value === '') continue;
    const key = `${entry.kind}:${String(entry.value)}`;
    const known = counts.get(key) ?? { value: entry.value, kind: entry.kind, count: 0 };
    known.count += 1;
    counts.set(key, known);
  }
  const sorted = [...counts.values()].sort((left, right) => right.count - left.count || storedOrder(left.value, right.value));
  const text = (entry: { value: SqlValue; kind: string }): string => {
    if (entry.kind === 'true' || entry.kind === 'false') return entry.kind;
    if (field === 'inflight') return entry.value === 1 ? 'true' : 'false';
    if (field === 'precise_amount') return amountFromKey(String(entry.value)).toString();
    return String(entry.value);
  };
  return [counts.size, sorted.slice(0, max).map((entry) => [text(entry), entry.count])];
}

/** Groups by hand: records in order, grouped by their values, the groups in the order of their first record. */
function groupsOf(ids: number[], values: Map<number, Record<string, { kind: string; value: SqlValue } | undefined>>, fields: string[], missingTogether: boolean): number[][] {
  const groups = new Map<string, number[]>();
  for (const id of ids) {
    const entries = fields.map((field) => values.get(id)?.[field]);
    const key = entries.some((entry) => entry === undefined) && !missingTogether ? `lone:${id}` : JSON.stringify(entries);
    const group = groups.get(key) ?? [];
    group.push(id);
    groups.set(key, group);
  }
  return [...groups.values()];
}

// Without words, time clauses alone are answered from per-second counts (index-schema.ts
// secondCountsTable), kept by triggers in a live index and counted once at the end of a rebuild. `found`
// must be the number of rows the clauses keep, in both, after holds were committed and voided (their
// records are written again), and for every shape of time clause.
void seededTest(t, 'a window of seconds is counted as its rows count', 31, async (t, random) => {
  const rig = engineRig();
  const holds: string[] = [];
  const transfers = (count: number): void => {
    for (let index = 0; index < count; index += 1) {
      // Bursts inside one second, and gaps of seconds to minutes.
      rig.clock.ms += random.chance(0.7) ? random.int(0, 40) : random.int(500, 90_000);
      const inflight = random.chance(0.2);
      const outcome = rig.engine.run({ op: 'transaction.create', ...transfer({
        source: random.pick(['@a', '@b', '@c']), destination: '@sink', allow_overdraft: true, precise_amount: BigInt(random.int(1, 100)), inflight,
      }) });
      if (!outcome.ok) throw new Error(outcome.rejection.message);
      if (inflight) holds.push(outcome.value.transaction.transaction_id);
    }
  };
  transfers(1_500);
  for (const hold of holds.splice(0, 200)) {
    rig.clock.ms += random.int(0, 2_000);
    const acted = rig.engine.run({ op: 'hold.act', transaction_id: hold, action: random.pick(['commit', 'void'] as const), precise_amount: 0n, skip_queue: true });
    if (!acted.ok) throw new Error(acted.rejection.message);
  }
  const live = await indexOf(t, rig);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-search-windows-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const source: LogSource = { get durableSeq() { return rig.log.appendedSeq; }, read: (from, to) => rig.log.read(from, to) };
  const rebuilt = await IndexStore.openReaders(await buildIndexFile(path.join(dir, 'index.sqlite'), source));
  t.teardown(() => rebuilt.close());

  const seconds = [...rig.log.read(1)].map((logged) => Math.floor(logged.event.at / 1000));
  const second = (): number => random.pick(seconds) + random.int(-2, 2);
  const clause = (): string => {
    const at = second();
    switch (random.int(0, 6)) {
      case 0: return `created_at:[${at}..${at + random.int(0, 300)}]`;
      case 1: return `created_at:=${at}`;
      case 2: return `created_at:>${at}`;
      case 3: return `created_at:>=${at}`;
      case 4: return `created_at:<${at}`;
      case 5: return `created_at:<=${at}`;
      default: return `created_at:[${at}..${at - random.int(1, 5)}]`;
    }
  };
  const wrong: string[] = [];
  let windows = 0;
  for (let index = 0; index < 300; index += 1) {
    const request = { q: '*', filter_by: Array.from({ length: random.int(1, 2) }, clause).join(' && '), sort_by: '', page: 1, per_page: random.pick([0, 10]) };
    const compiled = compileSearch('transactions', request);
    if (!compiled.ok) throw new Error(`${JSON.stringify(request)}: ${compiled.message}`);
    if (compiled.value.window) windows += 1;
    for (const [name, store] of [['live', live.readers], ['rebuilt', rebuilt]] as const) {
      const answered = await store.read((reader) => runSearch(reader, 'transactions', compiled.value));
      const expected = await store.read((reader) => oracle(reader, 'transactions', compiled.value));
      if (wrong.length < 5 && answered.found !== expected.found) wrong.push(`${name} ${JSON.stringify(request)}: found ${answered.found}, rows ${expected.found}`);
    }
  }
  t.equal(windows, 300, 'every request was answered from the per-second counts');
  t.same(wrong, [], 'every window counted as its rows');
});

// The per-second counts follow a record whose time changes or that is deleted (the projector never
// does either to a transaction today; the triggers keep the counts right if it ever does), negative
// times included: a second is floor(ms / 1000).
t.test('per-second counts follow changed and deleted records', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-per-second-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = await IndexStore.openWriter(path.join(dir, 'index.sqlite'));
  t.teardown(() => store.close());
  const counts = async (): Promise<unknown> => ({
    kept: await store.writer.all(`SELECT second, records FROM ${secondCountsTable('transactions')} WHERE records != 0 ORDER BY second`),
    rows: await store.writer.all(`SELECT CAST(floor(created_at / 1000.0) AS INTEGER) AS second, count(*) AS records FROM transactions GROUP BY 1 ORDER BY 1`),
  });
  await store.writer.exec(`INSERT INTO transactions (transaction_id, created_at) VALUES ('a', 1500), ('b', 2500), ('c', -500), ('d', -1000), ('e', 1999)`);
  await store.writer.exec(`UPDATE transactions SET created_at = 3500 WHERE transaction_id = 'a'; UPDATE transactions SET created_at = -1 WHERE transaction_id = 'e'`);
  await store.writer.exec(`DELETE FROM transactions WHERE transaction_id = 'b'`);
  const { kept, rows } = await counts() as { kept: unknown; rows: unknown };
  t.same(kept, rows, 'the counts are the rows per second');
  t.same(kept, [{ second: -1, records: 3 }, { second: 3, records: 1 }]);
});

/** The rig's log projected into an index in a temp dir, with its readers; `catchUp` projects what the log gained since. */
async function indexOf(t: Test, rig: ReturnType<typeof engineRig>): Promise<{ readers: IndexStore; catchUp(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-search-plans-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'index.sqlite');
  const writer = await IndexStore.openWriter(file);
  const source: LogSource = { get durableSeq() { return rig.log.appendedSeq; }, read: (from, to) => rig.log.read(from, to) };
  const projector = await Projector.create(writer, source);
  await projector.catchUp();
  const readers = await IndexStore.openReaders(file);
  t.teardown(async () => {
    await projector.stop();
    await readers.close();
    await writer.close();
  });
  return { readers, catchUp: async () => void (await projector.catchUp()) };
}

async function matchCount(reader: SqliteConnection, collection: 'transactions' | 'identities', match: string): Promise<number> {
  const fts = ftsTable(collection);
  return (await reader.all<{ n: number }>(`SELECT count(*) AS n FROM ${fts} WHERE ${fts} MATCH ?`, [match]))[0]!.n;
}

async function transactionIds(store: IndexStore, rowIds: number[]): Promise<string[]> {
  const ids: string[] = [];
  for (const rowId of rowIds) {
    const row = await store.read((reader) => reader.get<{ id: string }>(`SELECT transaction_id AS id FROM transactions WHERE ${ROW_ID} = ?`, [rowId]));
    ids.push(row?.id ?? '');
  }
  return ids;
}
