// newTransaction (engine/decision-scope.ts) writes a record's optional fields out one by one, for speed,
// where OPTIONAL_TRANSACTION_FIELDS (engine/records.ts) lists them for the codec and the index: a record
// with every optional field has them last, in that list's order, whatever order the caller gave them
// in, and one with none has none of them, so records keep the key order the log reads back.

import t from 'tap';
import { newTransaction } from '../engine/decision-scope.js';
import { OPTIONAL_TRANSACTION_FIELDS, type TransactionRecord } from '../engine/records.js';

const REQUIRED = {
  transaction_id: 'txn_1', source: 'bln_a', destination: 'bln_b', reference: 'ref-1', currency: 'USD', precise_amount: 100n, precision: 100n,
};

t.test('every optional field, given in reverse: all kept, last, in the listed order', async (t) => {
  const optional: Record<string, unknown> = {};
  for (const field of [...OPTIONAL_TRANSACTION_FIELDS].reverse()) optional[field] = `value of ${field}`;
  const record = newTransaction({ ...REQUIRED, ...(optional as Partial<TransactionRecord>) }, 1_000);
  const keys = Object.keys(record);
  t.same(keys.slice(-OPTIONAL_TRANSACTION_FIELDS.length), [...OPTIONAL_TRANSACTION_FIELDS]);
  for (const field of OPTIONAL_TRANSACTION_FIELDS) t.equal((record as unknown as Record<string, unknown>)[field], `value of ${field}`, field);
});

t.test('none given, or given as undefined: none kept', async (t) => {
  const undefinedFields = Object.fromEntries(OPTIONAL_TRANSACTION_FIELDS.map((field) => [field, undefined])) as Partial<TransactionRecord>;
  for (const record of [newTransaction(REQUIRED, 1_000), newTransaction({ ...REQUIRED, ...undefinedFields }, 1_000)]) {
    const keys = new Set(Object.keys(record));
    t.notOk(OPTIONAL_TRANSACTION_FIELDS.some((field) => keys.has(field)), 'no optional key');
    t.equal(record.created_at, 1_000);
  }
});
