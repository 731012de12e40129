// Unit tests for engine/transaction-hash.ts. The hash is part of every stored transaction, so its value
// for a given input must never change between versions; and distinct field values must never collide by
// sliding characters from one field into the next.

import { createHash } from 'node:crypto';
import t from 'tap';
import { transactionHash, type HashedFields } from '../engine/transaction-hash.js';

const FIXED: HashedFields = {
  precise_amount: 1250n,
  reference: 'ref-1',
  currency: 'USD',
  source: 'bln_a',
  destination: 'bln_b',
};

t.test('a fixed input has a fixed hash', async (t) => {
  // Computed once with `printf '%s' '["1250","ref-1","USD","bln_a","bln_b"]' | sha256sum`.
  t.equal(transactionHash(FIXED), '6be3424795e45828b80090c2287955536687c32faa96bcd2b51de477e83ed2e8');
  t.match(transactionHash(FIXED), /^[0-9a-f]{64}$/, 'lower-case hex SHA-256');
  t.equal(transactionHash({ ...FIXED }), transactionHash(FIXED), 'same fields, same hash');
});

t.test('the hashed text is the JSON array [precise_amount, reference, currency, source, destination]', async (t) => {
  const fields: HashedFields = { precise_amount: 10n ** 39n + 1n, reference: 'r "quoted" \\ é', currency: 'BTC', source: '@world', destination: 'bln_x' };
  const text = JSON.stringify([fields.precise_amount.toString(), fields.reference, fields.currency, fields.source, fields.destination]);
  t.equal(transactionHash(fields), createHash('sha256').update(text, 'utf8').digest('hex'));
});

t.test('every field counts', async (t) => {
  const base = transactionHash(FIXED);
  t.not(transactionHash({ ...FIXED, precise_amount: 1251n }), base, 'amount');
  t.not(transactionHash({ ...FIXED, reference: 'ref-2' }), base, 'reference');
  t.not(transactionHash({ ...FIXED, currency: 'EUR' }), base, 'currency');
  t.not(transactionHash({ ...FIXED, source: 'bln_c' }), base, 'source');
  t.not(transactionHash({ ...FIXED, destination: 'bln_c' }), base, 'destination');
  t.not(transactionHash({ ...FIXED, source: FIXED.destination, destination: FIXED.source }), base, 'direction');
});

t.test('fields stay apart: moving characters across a boundary changes the hash', async (t) => {
  const pairs: Array<[HashedFields, HashedFields, string]> = [
    [{ ...FIXED, reference: 'a', currency: 'bUSD' }, { ...FIXED, reference: 'ab', currency: 'USD' }, 'reference/currency'],
    [{ ...FIXED, source: 'bln_a', destination: 'bln_b' }, { ...FIXED, source: 'bln_abln_b', destination: '' }, 'source/destination'],
    [{ ...FIXED, precise_amount: 12n, reference: '50ref' }, { ...FIXED, precise_amount: 1250n, reference: 'ref' }, 'amount/reference'],
    [{ ...FIXED, reference: 'x","USD' , currency: 'y' }, { ...FIXED, reference: 'x', currency: 'USD","y' }, 'a separator inside a value'],
    [{ ...FIXED, reference: 'x\\', currency: '"y' }, { ...FIXED, reference: 'x\\"', currency: 'y' }, 'escapes inside values'],
    [{ ...FIXED, reference: '', currency: 'USD' }, { ...FIXED, reference: 'USD', currency: '' }, 'empty fields'],
  ];
  for (const [left, right, label] of pairs) t.not(transactionHash(left), transactionHash(right), label);
  const hashes = new Set<string>();
  const parts = ['', 'a', 'b', 'ab', ',', '"', '","'];
  for (const reference of parts) for (const currency of parts) for (const source of parts) hashes.add(transactionHash({ ...FIXED, reference, currency, source }));
  t.equal(hashes.size, parts.length ** 3, 'every combination of short parts hashes differently');
});
