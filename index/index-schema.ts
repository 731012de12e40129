// The SQLite layout of the query index: one table per collection with a column per filterable field, an
// external-content FTS5 table per collection kept in step by triggers, and `index_state` holding the
// checkpoint (the last log seq whose effects are in the rows). Column lists here are the single source
// for the writer's upserts and the readers' selects, so the two cannot drift apart.
//
// Amount columns hold sortable text (sortable-amount.ts); times are epoch milliseconds (0 = unset);
// flags are 0/1; `meta_data` is JSON text for json_extract and FTS; `extra` holds what has no column
// (split shares, rejection, hold progress, metadata with integers beyond 2^53) as base64 msgpack.
//
// Balance history is not here: index/history-store.ts keeps it beside the log, in LMDB.

import {
  contentlessTransactionTextsSql,
  RECONCILIATION_TABLES_SQL,
  TRANSACTION_TEXTS_FTS,
  transactionTextsFullTextSql,
  transactionTextsIndexesSql,
} from './reconciliation-tables.js';

/** Bump when the layout changes: an index with another version is thrown away and rebuilt from the log. */
export const SCHEMA_VERSION = 15;

export type Collection = 'ledgers' | 'balances' | 'transactions' | 'identities' | 'reconciliations';
export const COLLECTIONS: readonly Collection[] = ['ledgers', 'balances', 'transactions', 'identities', 'reconciliations'];

export interface TableLayout {
  table: Collection;
  /** The public id column (unique). */
  idColumn: string;
  /** Every stored column in row order, the id first. */
  columns: readonly string[];
  /** Columns whose values are INTEGER; the others are TEXT. */
  integerColumns: readonly string[];
  /**
   * Columns the full-text index covers: words people search by. Ids are left out: each is a term of its
   * own, they made the full-text index several times larger and slower to keep up, and an id is found
   * exactly (and faster) with a filter or the GET routes.
   */
  searchColumns: readonly string[];
  /**
   * Columns the full-text index also holds, one term per record each, for filters rather than for
   * words: a search's words never match them (search-compiler.ts names the searchColumns in its
   * expression), but an equality filter on one of them becomes a term of the same expression, so the
   * full-text index intersects the filtered records with the words' records itself instead of each
   * filtered record being checked against the words (about 3.5 µs each, and a busy balance has
   * thousands). See TermColumn.
   */
  termColumns?: readonly TermColumn[];
  /** Secondary indexes, as column lists. */
  indexes: readonly (readonly string[])[];
  /** The time column whose records are counted per second (secondCountsTable), if any. */
  countedTime?: string;
  /**
   * Columns a row keeps from its first version on (a balance's ledger, indicator, currency and creation
   * time): an upsert does not set them again, so the secondary indexes over them alone are left alone
   * when the row changes (SQLite rewrites an index entry whenever an UPDATE names one of its columns).
   */
  fixedColumns?: readonly string[];
  /**
   * Rows are deleted (identities): row ids are then never reused (AUTOINCREMENT), so a new row always
   * lies above what the full-text index holds, where its text track finds it (TEXT_TARGETS).
   */
  rowsDeleted?: true;
  /**
   * Indexes over the rows where a column is set (not ''): small when few rows have a value, and what
   * reconciliation looks groups up by (reconciliation-tables.ts). A query must say `<column> != ''`
   * for SQLite to use one.
   */
  setColumnIndexes?: readonly string[];
}

/**
 * A full-text column that holds another column's value as one term: a generated (virtual, unstored)
 * column of the table, the value's UTF-8 bytes in hex. Hex makes it one token whatever the value, and
 * an exact one: the tokenizer folds case and splits at punctuation, which SQL equality does not.
 */
export interface TermColumn {
  name: string;
  /** The column whose value it holds. */
  of: string;
}

/** The term a TermColumn holds for a value (the tokenizer lowercases SQLite's upper-case hex() alike). */
export function termOf(value: string): string {
  return Buffer.from(value, 'utf8').toString('hex');
}

export const LAYOUTS: Record<Collection, TableLayout> = {
  ledgers: {
    table: 'ledgers',
    idColumn: 'ledger_id',
    columns: ['ledger_id', 'name', 'created_at', 'meta_data', 'extra'],
    integerColumns: ['created_at'],
    searchColumns: ['name', 'meta_data'],
    indexes: [['created_at'], ['name']],
  },
  balances: {
    table: 'balances',
    idColumn: 'balance_id',
    columns: [
      'balance_id', 'ledger_id', 'identity_id', 'indicator', 'currency', 'balance', 'credit_balance', 'debit_balance',
      'inflight_balance', 'inflight_credit_balance', 'inflight_debit_balance', 'available_balance', 'version',
      'created_at', 'meta_data', 'extra',
    ],
    integerColumns: ['version', 'created_at'],
    searchColumns: ['indicator', 'currency', 'meta_data'],
    indexes: [['created_at'], ['ledger_id', 'created_at'], ['identity_id'], ['indicator'], ['currency', 'created_at'], ['balance']],
    fixedColumns: ['ledger_id', 'indicator', 'currency', 'created_at'],
  },
  transactions: {
    table: 'transactions',
    idColumn: 'transaction_id',
    columns: [
      'transaction_id', 'parent_transaction', 'source', 'destination', 'reference', 'currency', 'precise_amount',
      'precision', 'description', 'status', 'hash', 'allow_overdraft', 'inflight', 'skip_queue', 'created_at',
      'scheduled_for', 'inflight_expiry_date', 'inflight_commit_date', 'batch_id', 'meta_data', 'extra',
    ],
    integerColumns: [
      'allow_overdraft', 'inflight', 'skip_queue', 'created_at', 'scheduled_for', 'inflight_expiry_date', 'inflight_commit_date',
    ],
    searchColumns: ['reference', 'description', 'meta_data'],
    termColumns: [{ name: 'source_term', of: 'source' }, { name: 'destination_term', of: 'destination' }],
    countedTime: 'created_at',
    // `precise_amount` carries `created_at`: a window of time sorted by amount (the largest of a period)
    // is read down this index without a table row per entry (search-executor.ts pageDownSortIndex).
    indexes: [
      ['created_at'], ['source', 'created_at'], ['destination', 'created_at'], ['reference'], ['status', 'created_at'],
      ['currency', 'created_at'], ['precise_amount', 'created_at'],
    ],
    setColumnIndexes: ['parent_transaction', 'batch_id'],
  },
  identities: {
    table: 'identities',
    idColumn: 'identity_id',
    columns: [
      'identity_id', 'identity_type', 'organization_name', 'first_name', 'last_name', 'other_names', 'gender', 'dob',
      'email_address', 'phone_number', 'nationality', 'category', 'street', 'city', 'state', 'country', 'post_code',
      'created_at', 'meta_data', 'extra',
    ],
    integerColumns: ['dob', 'created_at'],
    searchColumns: [
      'first_name', 'last_name', 'other_names', 'organization_name', 'email_address', 'phone_number',
      'category', 'street', 'city', 'state', 'country', 'post_code', 'nationality', 'meta_data',
    ],
    indexes: [['created_at'], ['identity_type', 'created_at'], ['email_address'], ['last_name'], ['organization_name']],
    rowsDeleted: true,
  },
  reconciliations: {
    table: 'reconciliations',
    idColumn: 'reconciliation_id',
    columns: [
      'reconciliation_id', 'upload_id', 'source', 'strategy', 'grouping_criteria', 'matching_rule_ids', 'is_dry_run', 'status',
      'started_at', 'completed_at', 'matched_transactions', 'unmatched_transactions', 'processed_count', 'total_count',
      'failure_reason', 'attempts',
    ],
    integerColumns: [
      'is_dry_run', 'started_at', 'completed_at', 'matched_transactions', 'unmatched_transactions', 'processed_count', 'total_count', 'attempts',
    ],
    searchColumns: ['source', 'strategy', 'status', 'failure_reason'],
    indexes: [['started_at'], ['upload_id'], ['status', 'started_at']],
  },
};

/** Collections whose records carry `meta_data` (filters and searches may address its keys). */
export function hasMetaData(collection: Collection): boolean {
  return LAYOUTS[collection].columns.includes('meta_data');
}

/** The internal row id: it follows first appearance in the log and breaks ties in every sort. */
export const ROW_ID = 'row_id';

export function ftsTable(collection: Collection): string {
  return `${collection}_fts`;
}

/** `index_state` key of a number drawn when the file is made: tells one index file from another at the same path. */
export const INDEX_ID_KEY = 'index_id';

/**
 * `index_state` key of the number of times a collection's searched text was changed or deleted (the
 * full-text triggers count them). While it stands still, the records that matched some words still
 * match them, and only records added since can add matches (search-executor.ts counts those alone).
 */
export function textChangesKey(collection: Collection): string {
  return `text_changes:${collection}`;
}

/**
 * The full-text indexes follow the rows on a track of their own (projector.ts textBatch): each is filled
 * from its table's new rows in row id order, up to a mark the row batches leave, and may trail them.
 * `text_rowid:<target>` is the highest row id a full-text index holds; `text_checkpoint` the log seq
 * every row of which is in every full-text index. A row at or below its mark is kept in step by the
 * update and delete triggers; one above it is indexed as it stands when the track reaches it.
 */
export type TextTarget = Collection | 'transaction_texts';
export const TEXT_TARGETS: readonly TextTarget[] = [...COLLECTIONS, 'transaction_texts'];
export const TEXT_CHECKPOINT_KEY = 'text_checkpoint';

export function textRowKey(target: TextTarget): string {
  return `text_rowid:${target}`;
}

/**
 * One row per batch of rows committed and not yet in the full-text indexes: its checkpoint seq and
 * each text target's highest row id at that commit (`<target>_row`).
 */
export const TEXT_MARKS_TABLE = 'text_marks';

function textMarksSql(): string {
  return `CREATE TABLE ${TEXT_MARKS_TABLE} (seq INTEGER PRIMARY KEY, ${TEXT_TARGETS.map((target) => `${target}_row INTEGER NOT NULL`).join(', ')});`;
}

/** The row id column of a text target's table. */
export function textTargetRowId(target: TextTarget): string {
  return target === 'transaction_texts' ? 'text_id' : ROW_ID;
}

/** A row batch's mark (bound: the checkpoint seq), written in the batch's own transaction. */
export function textMarkSql(): string {
  const rows = TEXT_TARGETS.map((target) => `(SELECT coalesce(max(${textTargetRowId(target)}), 0) FROM ${target})`);
  return `INSERT OR REPLACE INTO ${TEXT_MARKS_TABLE} (seq, ${TEXT_TARGETS.map((target) => `${target}_row`).join(', ')}) VALUES (?, ${rows.join(', ')})`;
}

/** The condition of a full-text trigger: the row is in the full-text index already. */
function textIndexed(target: TextTarget): string {
  return `old.${textTargetRowId(target)} <= (SELECT value FROM index_state WHERE key = '${textRowKey(target)}')`;
}

function countTextChange(collection: Collection): string {
  return `UPDATE index_state SET value = value + 1 WHERE key = '${textChangesKey(collection)}';`;
}

/** A reader's view of the terms in a collection's full-text index (fts5vocab, one row per instance). */
export function vocabularyTable(collection: Collection): string {
  return `temp.${collection}_vocabulary`;
}

/**
 * A reader's count of the records each term is in (fts5vocab, one row per term): the number of records
 * one word matches, read from that word's list alone (no match cursor stepping over every record).
 */
export function termRecordsTable(collection: Collection): string {
  return `temp.${collection}_term_records`;
}

/** A reader's count of the records each term is in, per column (fts5vocab, one row per term and column). */
export function termColumnsTable(collection: Collection): string {
  return `temp.${collection}_term_columns`;
}

/** Creates the vocabulary views on a connection (temporary: they belong to that connection alone). */
export function vocabularySql(): string {
  return script(COLLECTIONS.flatMap((collection) => [
    `CREATE VIRTUAL TABLE ${vocabularyTable(collection)} USING fts5vocab(main, ${ftsTable(collection)}, 'instance')`,
    `CREATE VIRTUAL TABLE ${termRecordsTable(collection)} USING fts5vocab(main, ${ftsTable(collection)}, 'row')`,
    `CREATE VIRTUAL TABLE ${termColumnsTable(collection)} USING fts5vocab(main, ${ftsTable(collection)}, 'col')`,
  ]));
}

/** The full-text table's columns: the searched ones, then the term columns. */
export function ftsColumns(layout: TableLayout): string[] {
  return [...layout.searchColumns, ...(layout.termColumns ?? []).map((column) => column.name)];
}

/**
 * Tokens keep `_` and `-` inside them, so an id such as `txn_0193...-7abc` or a reference `INV-2024-17`
 * is one token: searching for it is an exact token match instead of a phrase of fragments.
 */
const TOKENIZER = `unicode61 tokenchars '_-'`;

const FTS_AUTOMERGE = 8;

function tableSql(layout: TableLayout): string {
  const columns = layout.columns.map((column) => {
    const type = layout.integerColumns.includes(column) ? 'INTEGER' : 'TEXT';
    const constraint = column === layout.idColumn ? ' NOT NULL UNIQUE' : '';
    return `${column} ${type}${constraint}`;
  });
  const terms = (layout.termColumns ?? []).map((term) => `${term.name} TEXT GENERATED ALWAYS AS (hex(${term.of})) VIRTUAL`);
  return `CREATE TABLE ${layout.table} (${ROW_ID} INTEGER PRIMARY KEY${layout.rowsDeleted ? ' AUTOINCREMENT' : ''}, ${[...columns, ...terms].join(', ')});`;
}

/** The FTS5 options every full-text table shares, whoever builds it: built segments must read alike. */
function ftsDefinition(layout: TableLayout, content: string): string {
  return `fts5(${ftsColumns(layout).join(', ')}, ${content}, tokenize="${TOKENIZER}")`;
}

/** The name of a collection's secondary index over these columns. */
export function indexName(collection: Collection, columns: readonly string[]): string {
  return `${collection}_by_${columns.join('_')}`;
}

function secondaryIndexesSql(layout: TableLayout): string[] {
  const name = layout.table;
  return [
    ...layout.indexes.map((index) => `CREATE INDEX ${indexName(layout.table, index)} ON ${name}(${index.join(', ')})`),
    ...(layout.setColumnIndexes ?? []).map((column) => `CREATE INDEX ${name}_by_set_${column} ON ${name}(${column}) WHERE ${column} != ''`),
  ];
}

/**
 * The full-text table over the collection's rows (external content: the words are indexed, the text
 * stays in the row) and the triggers that keep it in step.
 */
function fullTextSql(layout: TableLayout, fill: string[]): string[] {
  const name = layout.table;
  const fts = ftsTable(name);
  const columns = ftsColumns(layout);
  const searchList = columns.join(', ');
  const newValues = columns.map((column) => `new.${column}`).join(', ');
  // (A row's values are indexed as they stand by the text track, textInsertSql.)
  const oldValues = columns.map((column) => `old.${column}`).join(', ');
  // The stored columns behind the full-text ones (a term column is generated from another).
  const stored = [...layout.searchColumns, ...(layout.termColumns ?? []).map((term) => term.of)];
  const changed = stored.map((column) => `old.${column} IS NOT new.${column}`).join(' OR ');
  const terms = layout.termColumns ?? [];
  return [
    `CREATE VIRTUAL TABLE ${fts} USING ${ftsDefinition(layout, `content='${name}', content_rowid='${ROW_ID}'`)}`,
    ...fill,
    // Merge segments when 8 (not 4) of a size have piled up: about a fifth less work per inserted row,
    // for a few more segments for each query to read.
    `INSERT INTO ${fts}(${fts}, rank) VALUES ('automerge', ${FTS_AUTOMERGE})`,
    // Relevance weighs the searched columns alone: a term column adds nothing to a record's score.
    ...(terms.length === 0 ? [] : [
      `INSERT INTO ${fts}(${fts}, rank) VALUES ('rank', 'bm25(${[...layout.searchColumns.map(() => '1.0'), ...terms.map(() => '0.0')].join(', ')})')`,
    ]),
    // New rows reach the full-text index on its own track (TEXT_TARGETS); a row already in it is kept in
    // step here. Only a change to searched text touches the full-text index: balance amounts and
    // transaction statuses change all the time and must not pay for it.
    // Each also counts the change (textChangesKey): a count of matches taken before it no longer holds.
    `CREATE TRIGGER ${name}_fts_update AFTER UPDATE OF ${stored.join(', ')} ON ${name} WHEN (${changed}) AND ${textIndexed(name)} BEGIN
       INSERT INTO ${fts}(${fts}, rowid, ${searchList}) VALUES ('delete', old.${ROW_ID}, ${oldValues});
       INSERT INTO ${fts}(rowid, ${searchList}) VALUES (new.${ROW_ID}, ${newValues});
       ${countTextChange(name)} END`,
    `CREATE TRIGGER ${name}_fts_delete AFTER DELETE ON ${name} WHEN ${textIndexed(name)} BEGIN
       INSERT INTO ${fts}(${fts}, rowid, ${searchList}) VALUES ('delete', old.${ROW_ID}, ${oldValues});
       ${countTextChange(name)} END`,
  ];
}

/**
 * The tables in which FTS5 keeps an index's segments, averages and per-row token counts. A contentless
 * table and an external-content one with the same columns and tokenizer store these alike; only the
 * text's whereabouts differ, and neither keeps the text in a shadow table.
 */
function ftsShadowTables(collection: Collection): string[] {
  return shadowTablesOf(ftsTable(collection));
}

function shadowTablesOf(fts: string): string[] {
  return [`${fts}_data`, `${fts}_idx`, `${fts}_docsize`];
}

function copyShadows(shadows: string[], built: string): string[] {
  return shadows.flatMap((shadow) => [`DELETE FROM ${shadow}`, `INSERT INTO ${shadow} SELECT * FROM ${built}.${shadow}`]);
}

/**
 * Records per second of a collection's counted time column (TableLayout.countedTime), kept by
 * triggers and counted once at the end of a rebuild. A search's time clauses are whole seconds, so
 * the number of records in a window of them is a sum over the window's seconds instead of a count of
 * every row in it: a window of busy minutes holds hundreds of thousands of rows, and the count grew
 * with them. A second is floor(ms / 1000), negative times included.
 */
export function secondCountsTable(collection: Collection): string {
  return `${collection}_per_second`;
}

/** The second a time in milliseconds falls in, in SQL (integer division truncates towards zero). */
function secondOfSql(ms: string): string {
  return `((${ms} - ((${ms} % 1000) + 1000) % 1000) / 1000)`;
}

function secondCountsSql(layout: TableLayout, part: 'table' | 'fill' | 'triggers'): string[] {
  const column = layout.countedTime;
  if (column === undefined) return [];
  const name = layout.table;
  const counts = secondCountsTable(name);
  const add = (ms: string): string => `INSERT INTO ${counts} (second, records) VALUES (${secondOfSql(ms)}, 1) ON CONFLICT(second) DO UPDATE SET records = records + 1;`;
  const take = (ms: string): string => `UPDATE ${counts} SET records = records - 1 WHERE second = ${secondOfSql(ms)};`;
  switch (part) {
    case 'table':
      return [`CREATE TABLE ${counts} (second INTEGER PRIMARY KEY, records INTEGER NOT NULL)`];
    case 'fill':
      return [`INSERT INTO ${counts} (second, records) SELECT ${secondOfSql(column)}, count(*) FROM ${name} GROUP BY 1`];
    case 'triggers':
      return [
        `CREATE TRIGGER ${name}_per_second_insert AFTER INSERT ON ${name} BEGIN ${add(`new.${column}`)} END`,
        `CREATE TRIGGER ${name}_per_second_update AFTER UPDATE OF ${column} ON ${name} WHEN old.${column} IS NOT new.${column} BEGIN
           ${take(`old.${column}`)} ${add(`new.${column}`)} END`,
        `CREATE TRIGGER ${name}_per_second_delete AFTER DELETE ON ${name} BEGIN ${take(`old.${column}`)} END`,
      ];
  }
}

function script(statements: string[]): string {
  return statements.map((statement) => statement + ';').join('\n');
}

/**
 * FTS5's in-memory buffer before it writes a segment, for a build (the default is 1 MiB). Building a
 * million transactions took the same time with 1 to 8 MiB, and 40 % longer with 64 MiB: a buffer that
 * no longer fits the processor's caches costs more than the extra segments it saves.
 */
const FTS_BUILD_HASH_BYTES = 4 * 1024 * 1024;
/** `schema_version` of a file being built whose indexes are not made yet: never taken for a live index. */
const SCHEMA_VERSION_UNFINISHED = -1;

/**
 * The whole layout. `deferred` leaves out secondary indexes and full-text tables, for a rebuild: rows
 * go into bare tables (the id's UNIQUE constraint stays, upserts need it), then each index is sorted
 * once and each full-text index built in one pass, far cheaper than keeping them up to date row by row.
 */
export function schemaSql(options: { deferred?: boolean } = {}): string {
  const deferred = options.deferred === true;
  return [
    'CREATE TABLE index_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);',
    `INSERT INTO index_state (key, value) VALUES ('schema_version', ${deferred ? SCHEMA_VERSION_UNFINISHED : SCHEMA_VERSION}), ('checkpoint', 0), ('checkpoint_at', 0),
       ('${INDEX_ID_KEY}', abs(random()) % 9007199254740991), ${COLLECTIONS.map((collection) => `('${textChangesKey(collection)}', 0)`).join(', ')},
       ('${TEXT_CHECKPOINT_KEY}', 0), ${TEXT_TARGETS.map((target) => `('${textRowKey(target)}', 0)`).join(', ')};`,
    textMarksSql(),
    ...COLLECTIONS.map((collection) => tableSql(LAYOUTS[collection])),
    RECONCILIATION_TABLES_SQL,
    script(COLLECTIONS.flatMap((collection) => secondCountsSql(LAYOUTS[collection], 'table'))),
    ...(deferred ? [] : COLLECTIONS.map((collection) => script([
      ...secondaryIndexesSql(LAYOUTS[collection]), ...fullTextSql(LAYOUTS[collection], []), ...secondCountsSql(LAYOUTS[collection], 'triggers'),
    ]))),
    ...(deferred ? [] : [script([...transactionTextsIndexesSql(), ...transactionTextsFullTextSql([])])]),
  ].join('\n');
}

/** Step one of finishing a deferred file: sorts every secondary index and counts records per second. */
export function deferredIndexesSql(): string {
  return script([
    ...COLLECTIONS.flatMap((collection) => secondaryIndexesSql(LAYOUTS[collection])),
    ...transactionTextsIndexesSql(),
    ...COLLECTIONS.flatMap((collection) => [...secondCountsSql(LAYOUTS[collection], 'fill'), ...secondCountsSql(LAYOUTS[collection], 'triggers')]),
  ]);
}

/**
 * Builds, in the database it runs in, a contentless full-text table per collection from the rows of a
 * deferred file attached as `source`. Done by a second process while the first sorts the secondary
 * indexes (full-text-build.ts), then moved over by `fullTextFromCopySql`.
 */
export function contentlessFullTextSql(source: string): string {
  return script([...contentlessTransactionTextsSql(source), ...COLLECTIONS.flatMap((collection) => {
    const layout = LAYOUTS[collection];
    const fts = ftsTable(collection);
    const searchList = ftsColumns(layout).join(', ');
    return [
      `CREATE VIRTUAL TABLE ${fts} USING ${ftsDefinition(layout, `content=''`)}`,
      `INSERT INTO ${fts}(${fts}, rank) VALUES ('hashsize', ${FTS_BUILD_HASH_BYTES})`,
      `INSERT INTO ${fts}(rowid, ${searchList}) SELECT ${ROW_ID}, ${searchList} FROM ${source}.${collection} ORDER BY ${ROW_ID}`,
      // One segment instead of the build's several: a search that checks rows one by one seeks each
      // segment per row (half the time at a million transactions), and merging is a couple of seconds
      // of this process's time while the parent sorts its indexes.
      `INSERT INTO ${fts}(${fts}) VALUES ('optimize')`,
    ];
  })]);
}

/**
 * Step two of finishing a deferred file: creates the full-text tables and triggers and takes the
 * segments built from these same rows out of the database attached as `built`, then marks the file
 * finished.
 */
export function fullTextFromCopySql(built: string): string {
  return script([
    ...COLLECTIONS.flatMap((collection) => fullTextSql(LAYOUTS[collection], copyShadows(ftsShadowTables(collection), built))),
    ...transactionTextsFullTextSql(copyShadows(shadowTablesOf(TRANSACTION_TEXTS_FTS), built)),
    // Every row is in the full-text indexes now: the text track stands where the rows do.
    ...TEXT_TARGETS.map((target) => `UPDATE index_state SET value = (SELECT coalesce(max(${textTargetRowId(target)}), 0) FROM ${target}) WHERE key = '${textRowKey(target)}'`),
    `UPDATE index_state SET value = (SELECT value FROM index_state WHERE key = 'checkpoint') WHERE key = '${TEXT_CHECKPOINT_KEY}'`,
    `DELETE FROM ${TEXT_MARKS_TABLE}`,
    `UPDATE index_state SET value = ${SCHEMA_VERSION} WHERE key = 'schema_version'`,
  ]);
}

/**
 * The text track's step for one target: its rows above its mark, up to a row id, into its full-text
 * index, as they stand (external content: the index holds the words, the row the text).
 */
export function textInsertSql(target: TextTarget): string {
  if (target === 'transaction_texts') {
    return `INSERT INTO ${TRANSACTION_TEXTS_FTS}(rowid, reference, description) SELECT text_id, reference, description FROM transaction_texts WHERE text_id > ? AND text_id <= ? ORDER BY text_id`;
  }
  const layout = LAYOUTS[target];
  const columns = ftsColumns(layout).join(', ');
  return `INSERT INTO ${ftsTable(target)}(rowid, ${columns}) SELECT ${ROW_ID}, ${columns} FROM ${target} WHERE ${ROW_ID} > ? AND ${ROW_ID} <= ? ORDER BY ${ROW_ID}`;
}

/**
 * The writer's upsert for a table: rows arrive as one JSON array of row arrays, unpacked inside SQLite
 * (one statement per table per slice instead of one call per row). JSONB makes each `->>` a direct
 * lookup rather than a re-parse of the row's text. The JSON is bound as UTF-8 bytes (a Buffer) and read
 * back as text: that copies the bytes instead of transcoding a long JavaScript string in the binding.
 */
export function upsertSql(layout: TableLayout): string {
  const columns = [...layout.columns];
  const picks = columns.map((_, index) => `value->>${index}`).join(', ');
  const updates = layout.columns
    .filter((column) => column !== layout.idColumn && !(layout.fixedColumns ?? []).includes(column))
    .map((column) => `${column} = excluded.${column}`)
    .join(', ');
  return `INSERT INTO ${layout.table} (${columns.join(', ')}) SELECT ${picks} FROM jsonb_each(jsonb(CAST(? AS TEXT))) WHERE true
    ON CONFLICT(${layout.idColumn}) DO UPDATE SET ${updates}`;
}

/**
 * The balances' upsert for a row whose amounts alone changed (index/event-fold.ts balanceRecords): its
 * rows carry every column (the insert part needs them, though an existing row is what this is for) and
 * the update sets the amount columns and the version only, so only the index over the balance's amount
 * is rewritten and no full-text trigger looks at the row (balances change with nearly every transfer).
 */
export function upsertAmountsSql(layout: TableLayout, amountColumns: readonly string[]): string {
  const picks = layout.columns.map((_, index) => `value->>${index}`).join(', ');
  const updates = amountColumns.map((column) => `${column} = excluded.${column}`).join(', ');
  return `INSERT INTO ${layout.table} (${layout.columns.join(', ')}) SELECT ${picks} FROM jsonb_each(jsonb(CAST(? AS TEXT))) WHERE true
    ON CONFLICT(${layout.idColumn}) DO UPDATE SET ${updates}`;
}

/** The balance columns a posting changes. */
export const BALANCE_AMOUNT_COLUMNS = [
  'balance', 'credit_balance', 'debit_balance', 'inflight_balance', 'inflight_credit_balance', 'inflight_debit_balance', 'available_balance', 'version',
] as const;

export function deleteSql(layout: TableLayout): string {
  return `DELETE FROM ${layout.table} WHERE ${layout.idColumn} IN (SELECT value FROM json_each(?))`;
}

export function selectColumns(layout: TableLayout, alias = 't'): string {
  return layout.columns.map((column) => `${alias}.${column}`).join(', ');
}
