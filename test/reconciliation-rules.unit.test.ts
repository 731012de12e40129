// The pure parts of reconciliation: what a matching rule may say (closed sets, drifts, a criterion that
// narrows the candidates), exact criteria (a drift of 0.01 is 1/100, never a double: amounts one unit
// either side of the boundary), statement files (CSV quoting, line numbers, every kind of bad row), and
// best-first assignment (each transaction once, ties by id, ambiguity under grouped strategies).

import t from 'tap';
import { checkRule, dateWindowOf, ruleLookup } from '../engine/matching-rules.js';
import { parseDecimalFraction } from '../engine/exact-fraction.js';
import type { MatchingRuleRecord } from '../engine/reconciliation-records.js';
import { parseCsv } from '../http/views/csv-text.js';
import { externalRecordFrom, recordsOfFile, UploadRefusal } from '../http/schemas/external-records-input.js';
import type { MatchSide } from '../reconciliation/match-sides.js';
import { amountGap, assignPairs, type CandidatePair } from '../reconciliation/pair-assignment.js';
import { levenshteinWithin, prepareRule, ruleHolds } from '../reconciliation/rule-evaluation.js';

function rule(criteria: MatchingRuleRecord['criteria']): MatchingRuleRecord {
  return { rule_id: 'rule_x', name: 'x', description: '', criteria, created_at: 0, updated_at: 0 };
}

function side(amount: bigint, precision: bigint, date = 0, extra: Partial<MatchSide> = {}): MatchSide {
  return { amount, precision, currency: 'USD', references: ['R1'], descriptions: ['Card payment'], date, ...extra };
}

t.test('rules: closed sets, and every rule Blnk accepts', async (t) => {
  const ok = (criteria: Array<{ field: string; operator: string; allowable_drift?: string }>) => checkRule({ name: 'r', description: '', criteria });
  t.ok(ok([{ field: 'reference', operator: 'equals' }]).ok);
  t.ok(ok([{ field: 'amount', operator: 'equals', allowable_drift: '0.01' }]).ok);
  t.ok(ok([{ field: 'date', operator: 'after', allowable_drift: '86400' }, { field: 'description', operator: 'contains' }]).ok);
  // Blnk's TestRecon_ValidateCriteria: all twenty field x operator pairs pass, even the ones that never hold.
  for (const field of ['amount', 'date', 'description', 'reference', 'currency']) {
    for (const operator of ['equals', 'greater_than', 'less_than', 'contains']) t.ok(ok([{ field, operator }]).ok, `${field} ${operator}`);
  }
  // Blnk's TestRecon_ValidateDrift: checked under equals only, and a date drift has no upper bound.
  for (const [field, operator, drift] of [
    ['amount', 'equals', '0'], ['amount', 'equals', '1'], ['date', 'equals', '31536000'], ['date', 'equals', '1e12'], ['date', 'equals', '0.0001'],
    ['amount', 'greater_than', '-50'], ['amount', 'contains', '1000'], ['description', 'equals', '1000'], ['currency', 'equals', '-5'],
    ['reference', 'contains', '16'], ['date', 'after', '-1'],
  ] as const) t.ok(ok([{ field, operator, allowable_drift: drift }]).ok, `${field} ${operator} drift ${drift}`);
  // Each of these was refused before ("a rule needs one criterion that narrows the candidates").
  t.ok(ok([{ field: 'reference', operator: 'contains' }]).ok, 'reference contains alone');
  t.ok(ok([{ field: 'description', operator: 'contains' }]).ok);
  t.ok(ok([{ field: 'date', operator: 'after' }, { field: 'currency', operator: 'equals' }]).ok);
  const refused = (criteria: Array<{ field: string; operator: string; allowable_drift?: string }>, pattern: RegExp) => {
    const checked = ok(criteria);
    t.notOk(checked.ok, JSON.stringify(criteria));
    if (!checked.ok) t.match(checked.rejection.message, pattern);
  };
  refused([{ field: 'colour', operator: 'equals' }], /field must be one of/);
  refused([{ field: 'amount', operator: 'like' }], /operator must be one of/);
  refused([{ field: 'amount', operator: 'after' }], /does not apply to amount/);
  refused([{ field: 'amount', operator: 'equals', allowable_drift: '1.5' }], /between 0 and 1/);
  refused([{ field: 'amount', operator: 'equals', allowable_drift: '-0.1' }], /between 0 and 1/);
  refused([{ field: 'date', operator: 'equals', allowable_drift: '-0.000001' }], /must not be negative/);
  refused([{ field: 'date', operator: 'equals', allowable_drift: 'soon' }], /decimal number/);
  refused([], /at least one/);
  t.notOk(checkRule({ name: ' ', description: '', criteria: [{ field: 'reference', operator: 'equals' }] }).ok, 'a name is required');

  t.same(dateWindowOf({ field: 'date', operator: 'after', allowable_drift: '60' }), { fromMs: -60_000, toMs: -1 },
    'after: the internal date lies before the external one, by at most the drift');
  t.same(dateWindowOf({ field: 'date', operator: 'before', allowable_drift: '1.5' }), { fromMs: 1, toMs: 1_500 });
  t.equal(dateWindowOf({ field: 'date', operator: 'after', allowable_drift: '-5' }), undefined, 'a drift that is not positive bounds nothing (Blnk ignores it)');
  const kind = (criteria: MatchingRuleRecord['criteria'], mode: 'transactions' | 'group_members' = 'transactions') => ruleLookup(rule(criteria), mode).kind;
  t.equal(kind([{ field: 'reference', operator: 'contains' }]), 'text_contains');
  t.equal(kind([{ field: 'reference', operator: 'contains', allowable_drift: '10' }]), 'scan', 'a fuzzy contains is no index lookup');
  t.equal(kind([{ field: 'description', operator: 'equals' }]), 'text_equals');
  t.equal(kind([{ field: 'amount', operator: 'equals' }, { field: 'reference', operator: 'contains' }], 'group_members'), 'text_contains');
  t.equal(kind([{ field: 'amount', operator: 'equals' }], 'group_members'), 'scan', 'an amount finds no group: scanned');
  t.equal(kind([{ field: 'amount', operator: 'greater_than' }, { field: 'currency', operator: 'equals' }]), 'scan');
  t.equal(kind([{ field: 'amount', operator: 'contains' }, { field: 'reference', operator: 'equals' }]), 'never');
  t.same(parseDecimalFraction('0.010'), { numerator: 1n, denominator: 100n });
  t.same(parseDecimalFraction('1e-3'), { numerator: 1n, denominator: 1000n });
});

t.test('criteria Blnk gives a meaning to, as Blnk means them', async (t) => {
  const holds = (criteria: MatchingRuleRecord['criteria'], external: Partial<MatchSide>, internal: Partial<MatchSide> = {}) =>
    ruleHolds(prepareRule(rule(criteria)), side(1n, 1n, 0, external), side(1n, 1n, 0, internal));
  // TestRecon_MatchesString_ContainsAndLevenshteinBoundary.
  t.ok(holds([{ field: 'reference', operator: 'contains' }], { references: ['INV-123'] }, { references: ['payment inv-123 settled'] }));
  t.ok(holds([{ field: 'reference', operator: 'contains' }], { references: ['Payment INV-123 settled'] }, { references: ['inv-123'] }), 'both ways');
  const fuzzy = (percent: string) => holds([{ field: 'reference', operator: 'contains', allowable_drift: percent }], { references: ['payment-12345'] }, { references: ['payment-12399'] });
  t.notOk(fuzzy('15'), 'distance 2 of 13 bytes: 15% allows 1');
  t.ok(fuzzy('16'), '16% allows 2');
  t.ok(holds([{ field: 'reference', operator: 'contains', allowable_drift: '100' }], { references: ['abc'] }, { references: ['xyz'] }), 'at 100% anything of that length');
  t.notOk(holds([{ field: 'reference', operator: 'contains', allowable_drift: '-5' }], { references: ['abc'] }, { references: ['abd'] }));
  // Pairs that compare nothing never hold (matchesGroupAmount's default, "unsupported string operators must fail closed").
  t.notOk(holds([{ field: 'amount', operator: 'contains' }], {}));
  t.notOk(holds([{ field: 'reference', operator: 'greater_than' }], {}));
  t.notOk(holds([{ field: 'date', operator: 'contains' }], {}));
  t.notOk(holds([{ field: 'currency', operator: 'less_than' }], {}));
  // Dates: greater_than/less_than mean after/before (TestRecon_DateOperatorsAlignedWithValidation); a huge drift is exact.
  t.ok(holds([{ field: 'date', operator: 'greater_than' }], { date: 3_600_000 }));
  t.notOk(holds([{ field: 'date', operator: 'greater_than' }], { date: 0 }), 'strictly after');
  t.ok(holds([{ field: 'date', operator: 'equals', allowable_drift: '2e13' }], { date: 8.64e15 }, { date: -8.64e15 }), 'a drift beyond 2^53 ms is compared in bigints');
  t.notOk(holds([{ field: 'date', operator: 'equals', allowable_drift: '1e13' }], { date: 8.64e15 }, { date: -8.64e15 }), '1.728e16 ms apart is more than 1e16');
  t.notOk(holds([{ field: 'date', operator: 'equals', allowable_drift: '60' }], { date: 60_900 }), 'TestRecon_DateDriftComparesFractionalSeconds: 60.9 s is not within 60 s');
  t.ok(holds([{ field: 'date', operator: 'equals', allowable_drift: '60.9' }], { date: 60_900 }));
  t.ok(levenshteinWithin(Array.from('kitten'), Array.from('sitting'), 3));
  t.notOk(levenshteinWithin(Array.from('kitten'), Array.from('sitting'), 2));
});

t.test('criteria are exact: a drift boundary one smallest unit either side', async (t) => {
  const onePercent = prepareRule(rule([{ field: 'amount', operator: 'equals', allowable_drift: '0.01' }]));
  // Internal 100.00 at precision 100: 1% is exactly 1.00.
  t.ok(ruleHolds(onePercent, side(10_100n, 100n), side(10_000n, 100n)), '101.00 against 100.00 is within 1%');
  t.notOk(ruleHolds(onePercent, side(10_101n, 100n), side(10_000n, 100n)), '101.01 is not');
  t.ok(ruleHolds(onePercent, side(9_900n, 100n), side(10_000n, 100n)), '99.00 is within');
  t.notOk(ruleHolds(onePercent, side(9_899n, 100n), side(10_000n, 100n)), '98.99 is not');
  // Different precisions compare by value: 1.01 at precision 100 against 1.000 at precision 1000.
  t.ok(ruleHolds(onePercent, side(101n, 100n), side(1_000n, 1_000n)), 'precisions are cross-multiplied');
  t.notOk(ruleHolds(onePercent, side(101n, 100n), side(1_000n, 1_000n, 0, { currency: 'EUR' })), 'never across currencies');
  // 0.1 + 0.2 is not 0.3 in doubles; here drift 0.3 of 10 is exactly 3.
  const drift = prepareRule(rule([{ field: 'amount', operator: 'equals', allowable_drift: '0.3' }]));
  t.ok(ruleHolds(drift, side(13n, 1n), side(10n, 1n)));
  t.notOk(ruleHolds(drift, side(14n, 1n), side(10n, 1n)));

  const window = prepareRule(rule([{ field: 'reference', operator: 'equals' }, { field: 'date', operator: 'equals', allowable_drift: '60' }]));
  t.ok(ruleHolds(window, side(1n, 1n, 60_000), side(1n, 1n, 0)));
  t.notOk(ruleHolds(window, side(1n, 1n, 60_001), side(1n, 1n, 0)));
  const after = prepareRule(rule([{ field: 'reference', operator: 'equals' }, { field: 'date', operator: 'after', allowable_drift: '60' }]));
  t.ok(ruleHolds(after, side(1n, 1n, 30_000), side(1n, 1n, 0)), 'the bank books after the ledger');
  t.notOk(ruleHolds(after, side(1n, 1n, 0), side(1n, 1n, 0)), 'strictly after');
  const contains = prepareRule(rule([{ field: 'reference', operator: 'equals' }, { field: 'description', operator: 'contains' }]));
  t.ok(ruleHolds(contains, side(1n, 1n, 0, { descriptions: ['CARD PAYMENT 1234'] }), side(1n, 1n)), 'either way, any case');
  t.notOk(ruleHolds(contains, side(1n, 1n, 0, { descriptions: [''] }), side(1n, 1n)), 'an empty text contains nothing');
  const reference = prepareRule(rule([{ field: 'reference', operator: 'equals' }]));
  t.notOk(ruleHolds(reference, side(1n, 1n, 0, { references: ['r1'] }), side(1n, 1n)), 'equals is exact');
  t.ok(ruleHolds(reference, side(1n, 1n, 0, { references: ['x', 'R1'] }), side(1n, 1n)), 'any member of a group');
  const greater = prepareRule(rule([{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'greater_than' }]));
  t.ok(ruleHolds(greater, side(1_001n, 1_000n), side(1n, 1n)));
  t.notOk(ruleHolds(greater, side(1_000n, 1_000n), side(1n, 1n)));
});

t.test('statement files: CSV quoting, any header case and order, every kind of bad row', async (t) => {
  t.same(parseCsv('\ufeffa,b\r\n"x, ""y""",2\n\n"multi\nline",3\n'), [
    { line: 1, fields: ['a', 'b'] }, { line: 2, fields: ['x, "y"', '2'] }, { line: 4, fields: ['multi\nline', '3'] },
  ]);
  t.throws(() => parseCsv('a\n"open'), { name: 'CsvSyntaxError', line: 2 });
  const header = 'DATE,Reference,amount,Currency,ID,description';
  const good = [header, '2025-03-17T06:32:49Z,INV-1,152.75,USD,p-1,Invoice', '2025-03-17,INV-2,-90,JPY,p-2,"Refund, partial"'].join('\n');
  const records = recordsOfFile('csv', good);
  t.same(records.map((record) => [record.id, record.amount, record.precision, record.date]), [
    ['p-1', 15_275n, 100n, Date.UTC(2025, 2, 17, 6, 32, 49)],
    ['p-2', -90n, 1n, Date.UTC(2025, 2, 17)],
  ]);
  const refusal = (text: string): UploadRefusal => {
    try {
      recordsOfFile('csv', text);
    } catch (error) {
      if (error instanceof UploadRefusal) return error;
      throw error;
    }
    throw new Error('accepted');
  };
  const bad: Array<[string, RegExp, Record<string, unknown>]> = [
    [`${header}\n2025-03-17,INV-1,,USD,p-1,x`, /^line 2: amount: .*empty/, { line: 2, field: 'amount' }],
    [`${header}\n2025-03-17,INV-1,12.345,USD,p-1,x`, /^line 2: amount: has more decimal places than USD/, { line: 2, field: 'amount' }],
    [`${header}\n2025-03-17,INV-1,1.0.0,USD,p-1,x`, /^line 2: amount:/, { line: 2, field: 'amount' }],
    [`${header}\n2025-03-17,INV-1,abc,USD,p-1,x`, /^line 2: amount:/, { line: 2, field: 'amount' }],
    [`${header}\n2025-03-17,INV-1,1e400,USD,p-1,x`, /^line 2: amount:/, { line: 2, field: 'amount' }],
    [`${header}\n2025-02-30,INV-1,1,USD,p-1,x`, /^line 2: date:/, { line: 2, field: 'date' }],
    [`${header}\nyesterday,INV-1,1,USD,p-1,x`, /^line 2: date:/, { line: 2, field: 'date' }],
    [`${header}\n2025-03-17,INV-1,1,USD,,x`, /^line 2: id:/, { line: 2, field: 'id' }],
    [`${header}\n2025-03-17,INV-1,1,U S D,p-1,x`, /^line 2: currency:/, { line: 2, field: 'currency' }],
    [`${header}\n2025-03-17,INV-1,1,USD,p-1`, /^line 2: 5 fields where the header has 6/, { line: 2 }],
    [`${header}\n2025-03-17,INV-1,1,USD,p-1,x\n2025-03-17,INV-2,1,USD,p-1,y`, /^line 3: id: "p-1" is already used on line 2/, { line: 3, field: 'id' }],
    ['date,reference,amount,currency,id\n2025-03-17,INV-1,1,USD,p-1', /^line 1: no description column/, { line: 1, field: 'description' }],
    [`${header}\n2025-03-17,"INV-1,1,USD,p-1,x`, /^line 2: a quoted field is not closed/, { line: 2 }],
    [header, /holds no records/, {}],
  ];
  for (const [text, message, details] of bad) {
    const error = refusal(text);
    t.match(error.message, message, text.split('\n').slice(-1)[0] as string);
    t.match(error.details, details);
  }
  const jsonError = (() => {
    try {
      recordsOfFile('json', '[\n  {"id": "a", "amount": 1, "currency": "USD", "reference": "r", "description": "", "date": "2025-01-01T00:00:00Z"},\n  {"id": "b", "amount": "1.5.1", "currency": "USD", "reference": "r", "description": "", "date": "2025-01-01T00:00:00Z"}\n]');
    } catch (error) {
      return error as UploadRefusal;
    }
    return undefined;
  })();
  t.match(jsonError?.message, /^line 3: amount:/, 'a JSON item is named by the line it starts on');
  const fields = { id: 'a', amount: 0.1, currency: 'KWD', reference: 'r', description: 'd', date: '2025-01-01 10:00:00' };
  t.match(externalRecordFrom(fields), { ok: true, record: { amount: 100n, precision: 1000n } }, 'KWD has three decimals');
  t.match(externalRecordFrom({ ...fields, reference: undefined }), { ok: false, field: 'reference', message: 'is missing' });
});

t.test('assignment: best first, each transaction once, ties by id, ambiguity refused under groups', async (t) => {
  const external = side(100n, 1n, 0);
  const pair = (probe: number, candidateKey: string, amount: bigint, date: number): CandidatePair => {
    const internal = side(amount, 1n, date);
    return { probe, candidateKey, internalIds: [candidateKey], ruleId: 'r', amountGap: amountGap(external, internal), timeGap: Math.abs(date), external, internal };
  };
  const best = assignPairs([pair(0, 'txn_b', 101n, 0), pair(0, 'txn_a', 100n, 50), pair(1, 'txn_a', 100n, 0)], { refuseTies: false });
  t.equal(best.assigned.get(1)?.candidateKey, 'txn_a', 'the exact amount and time wins the transaction');
  t.equal(best.assigned.get(0)?.candidateKey, 'txn_b', 'the other takes its next best');
  const tie = assignPairs([pair(0, 'txn_b', 100n, 5), pair(0, 'txn_a', 100n, -5)], { refuseTies: false });
  t.equal(tie.assigned.get(0)?.candidateKey, 'txn_a', 'a tie breaks by id');
  const grouped = assignPairs([pair(0, 'txn_b', 100n, 5), pair(0, 'txn_a', 100n, -5)], { refuseTies: true });
  t.notOk(grouped.assigned.has(0));
  t.ok(grouped.ambiguous.has(0), 'a tie under a grouped strategy is reported, not guessed');
  const duplicate = assignPairs([pair(0, 'txn_a', 100n, 0), pair(1, 'txn_a', 100n, 0)], { refuseTies: false });
  t.equal(duplicate.assigned.size, 1, 'a duplicated line cannot claim the same transaction');
  t.ok(duplicate.hadPairs.has(1));
});
