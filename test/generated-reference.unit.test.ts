// engine/records.ts hasGeneratedReference compares a reference with the one generated from the id in
// place: it must answer exactly as building the generated reference and comparing would.

import fc from 'fast-check';
import t from 'tap';
import { generatedReference, hasGeneratedReference } from '../engine/records.js';

const byBuilding = (record: { transaction_id: string; reference: string }): boolean =>
  record.transaction_id.startsWith('txn_') && record.reference === generatedReference(record.transaction_id);

t.test('the same answer as building the generated reference', async (t) => {
  const tail = fc.string({ minLength: 0, maxLength: 40 });
  const id = fc.oneof(tail.map((text) => `txn_${text}`), tail, tail.map((text) => `ref_${text}`));
  const record = fc.oneof(
    id.map((transaction_id) => ({ transaction_id, reference: transaction_id.startsWith('txn_') ? generatedReference(transaction_id) : transaction_id })),
    fc.record({ transaction_id: id, reference: fc.oneof(tail, tail.map((text) => `ref_${text}`)) }),
    id.chain((transaction_id) => fc.nat({ max: 60 }).map((at) => {
      const generated = transaction_id.startsWith('txn_') ? generatedReference(transaction_id) : `ref_${transaction_id}`;
      return { transaction_id, reference: generated.slice(0, at) + 'x' + generated.slice(at + 1) };
    })),
  );
  fc.assert(fc.property(record, (candidate) => hasGeneratedReference(candidate) === byBuilding(candidate)), { seed: 20261202, numRuns: 20_000 });
  t.ok(hasGeneratedReference({ transaction_id: 'txn_0193-ab', reference: 'ref_0193-ab' }));
  t.notOk(hasGeneratedReference({ transaction_id: 'txn_0193-ab', reference: 'ref_0193-ac' }));
  t.notOk(hasGeneratedReference({ transaction_id: 'txn_0193-ab', reference: 'ref_0193-a' }));
});
