// The search executor picks among several plans (issue 17): the last word matched exactly when no other
// term starts with it, the words checked row by row when the indexed filter clauses hold few rows, a
// page read down a sort index instead of sorting every filtered row. None may change an answer. On a
// seeded random ledger (words that are prefixes of others, busy and quiet balances, statuses, amounts,
// times), every random search is answered by runSearch and by the plain reading of the request (the
// prefix expression, the filters, the order; ranked when the words match few records) written as one
// SQL query per answer: `found` and the page's rows must be the same. A single common word, whose count
// is read from the vocabulary and then kept, is checked against the match's own count as the index changes.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { IndexStore } from '../index/index-store.js';
import { buildIndexFile } from '../index/secondary-index.js';
import { ftsTable, LAYOUTS, ROW_ID, secondCountsTable } from '../index/index-schema.js';
import { Projector, type LogSource } from '../index/projector.js';
import { compileSearch, RANK_MATCHES_MAX, type SearchPlan } from '../index/search-compiler.js';
import { runSearch } from '../index/search-executor.js';
import type { SqliteConnection } from '../index/sqlite-connection.js';
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
