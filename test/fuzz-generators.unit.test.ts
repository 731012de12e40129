// The fuzzer's own parts, checked without a server: bodies generated from a route's schema mostly pass
// that schema (so the fuzzer reaches the code behind validation, and a schema change the generator cannot
// follow shows up here); the declared stand-in schemas give bodies the routes' real validators accept;
// mutations change what they say; every tree is written as JSON text a parser reads; the case sequence
// replays from its seed; the implied-amount oracle does exact decimal arithmetic; and a delete whose
// outcome is unknown is not held against the server.

import fc from 'fast-check';
import t from 'tap';
import { AcknowledgedWrites, learnFromAnswer } from '../fuzz/acknowledged-writes.js';
import { applyMutation, type Mutation } from '../fuzz/body-mutation.js';
import { CaseSequence, caseRequest, type SentCase } from '../fuzz/fuzz-case.js';
import type { FuzzAnswer } from '../fuzz/fuzz-request.js';
import { FuzzObject, fuzzJsonText, kindOf, RawNumber, type FuzzJson } from '../fuzz/fuzz-json.js';
import { hostileValue } from '../fuzz/hostile-values.js';
import { impliedPreciseAmount } from '../fuzz/exact-amounts.js';
import { IdPools } from '../fuzz/id-pools.js';
import { bodyArbitrary } from '../fuzz/route-requests.js';
import { DECLARED_SCHEMA_ROUTES, FUZZ_ROUTES, routeKey } from '../fuzz/route-table.js';
import { parseJsonLossless } from '../http/schemas/lossless-json.js';
import { validateSearch } from '../http/schemas/query-schemas.js';
import { validateBulk, validateTransaction } from '../http/schemas/transaction-commands.js';

const SAMPLES = 200;
const context = new IdPools().context(Date.UTC(2026, 0, 1));

function sampleBodies(route: (typeof FUZZ_ROUTES)[number], seed: number): unknown[] {
  return fc.sample(bodyArbitrary(route)!, { seed, numRuns: SAMPLES }).map((body) => parseJsonLossless(fuzzJsonText(body, context)));
}

t.test('unmutated bodies mostly pass the route\'s own exported schema', async (t) => {
  for (const route of FUZZ_ROUTES.filter((entry) => entry.body && entry.schemaSource === 'exported')) {
    const passed = sampleBodies(route, 1).filter((body) => route.body!.safeParse(body).success).length;
    // Hints and the schema's own shapes both make some invalid values on purpose; half is plenty.
    t.ok(passed >= SAMPLES / 2, `${routeKey(route)}: ${passed}/${SAMPLES} pass`);
  }
});

t.test('transaction, bulk and search bodies pass the routes\' full validators (checks across fields included)', async (t) => {
  const validators: Record<string, (body: unknown) => unknown> = {
    'POST /transactions': validateTransaction,
    'POST /transactions/bulk': validateBulk,
    'POST /search/:collection': validateSearch,
  };
  for (const route of FUZZ_ROUTES.filter((entry) => validators[routeKey(entry)] !== undefined)) {
    const validator = validators[routeKey(route)];
    const accepted = sampleBodies(route, 2).filter((body) => {
      try {
        validator!(body);
        return true;
      } catch {
        return false;
      }
    }).length;
    t.ok(accepted >= SAMPLES / 50, `${routeKey(route)}: ${accepted}/${SAMPLES} accepted`);
  }
  t.ok(DECLARED_SCHEMA_ROUTES.includes('POST /search/:collection'), 'declared routes are listed');
});

t.test('a replace mutation changes the JSON type at any depth, the root included', async (t) => {
  const body = new FuzzObject([['a', 1], ['b', new FuzzObject([['c', 'text']])]]);
  fc.assert(fc.property(fc.nat(), hostileValue, (at, value) => {
    const candidates = { null: value, boolean: value, number: value, string: value, array: value, object: value };
    for (const kind of Object.keys(candidates) as Array<keyof typeof candidates>) if (kindOf(value) === kind) candidates[kind] = kind === 'null' ? 0 : null;
    const mutation: Mutation = { kind: 'replace', at, sameKind: false, candidates };
    const mutated = applyMutation(body, mutation);
    return fuzzJsonText(mutated, context) !== fuzzJsonText(body, context);
  }), { seed: 3, numRuns: 200 });
  const root = applyMutation(body, { kind: 'replace', at: 0, sameKind: false, candidates: { null: 1, boolean: 1, number: 1, string: 1, array: 1, object: 'x' } });
  t.equal(root, 'x', 'the root itself is replaced');
});

t.test('every hostile value is written as JSON text a parser reads', async (t) => {
  fc.assert(fc.property(hostileValue, (value) => {
    const text = fuzzJsonText(new FuzzObject([['v', value]]), context);
    if (text.length > 1_000_000) return true; // megabyte strings parse like short ones
    JSON.parse(text);
    return true;
  }), { seed: 4, numRuns: 500 });
  t.pass('parsed');
});

t.test('the case sequence replays from its seed', async (t) => {
  const first = new CaseSequence(1234, FUZZ_ROUTES);
  const second = new CaseSequence(1234, FUZZ_ROUTES);
  for (const index of [0, 1, 63, 64, 500, 77, 3]) {
    const a = caseRequest(first.caseAt(index), FUZZ_ROUTES, context);
    const b = caseRequest(second.caseAt(index), FUZZ_ROUTES, context);
    t.same([a.request.method, a.request.path, a.request.headers, a.bodyDescription], [b.request.method, b.request.path, b.request.headers, b.bodyDescription], `case ${index}`);
  }
  const other = new CaseSequence(1235, FUZZ_ROUTES);
  const differ = [0, 1, 2, 3, 4].some((index) => caseRequest(first.caseAt(index), FUZZ_ROUTES, context).bodyDescription !== caseRequest(other.caseAt(index), FUZZ_ROUTES, context).bodyDescription
    || caseRequest(first.caseAt(index), FUZZ_ROUTES, context).request.path !== caseRequest(other.caseAt(index), FUZZ_ROUTES, context).request.path);
  t.ok(differ, 'another seed gives other cases');
});

t.test('the implied precise amount is exact decimal arithmetic', async (t) => {
  const body = (...entries: Array<[string, FuzzJson]>): FuzzJson => new FuzzObject(entries);
  t.equal(impliedPreciseAmount(body(['amount', 12.34], ['precision', 100])), 1234n);
  t.equal(impliedPreciseAmount(body(['amount', new RawNumber('0.1000000000000000055')], ['precision', new RawNumber('10000000000000000000')])), 1000000000000000055n);
  t.equal(impliedPreciseAmount(body(['amount', new RawNumber('1e2')])), 100n);
  t.equal(impliedPreciseAmount(body(['amount', '12.50'], ['precision', '100'])), 1250n);
  t.equal(impliedPreciseAmount(body(['amount', 10.005], ['precision', 100])), undefined, 'would need rounding');
  t.equal(impliedPreciseAmount(body(['precise_amount', new RawNumber('18446744073709551617')], ['amount', 1])), 18446744073709551617n, 'precise_amount wins');
  t.equal(impliedPreciseAmount(body(['precise_amount', 5], ['precise_amount', 7])), 7n, 'the last of a repeated key');
  t.equal(impliedPreciseAmount(body(['precise_amount', '1.5'])), undefined);
  t.equal(impliedPreciseAmount(body(['amount', 1e300])), undefined, 'past any sensible exponent');
});

t.test('a delete refused when sent again after a connection reset is uncertain, not undone', async (t) => {
  const deleteOf = (id: string): SentCase => ({
    request: { method: 'DELETE', path: `/identities/${id}`, headers: {} }, routeKey: 'DELETE /identities/:id', params: [id], body: undefined, bodyDescription: '',
  });
  const answer = (status: number, resent?: boolean): FuzzAnswer => ({ kind: 'answer', status, headers: {}, text: '{}', ms: 1, ...(resent ? { resent } : {}) });
  const writes = new AcknowledgedWrites();
  const pools = new IdPools();
  for (const id of ['idt_a', 'idt_b', 'idt_c', 'idt_d']) writes.markPresent(writes.identities, id);
  learnFromAnswer(deleteOf('idt_a'), answer(404, true), pools, writes);
  learnFromAnswer(deleteOf('idt_b'), answer(404), pools, writes);
  learnFromAnswer(deleteOf('idt_c'), answer(200, true), pools, writes);
  learnFromAnswer(deleteOf('idt_d'), { kind: 'no-answer', error: 'timeout', timedOut: true, ms: 1 }, pools, writes);
  t.same([...writes.uncertain].sort(), ['idt_a', 'idt_d'], 'refused after a reset, or never answered: either outcome is right');
  t.equal(writes.identities.get('idt_b'), 'present', 'refused outright: it was not deleted');
  t.equal(writes.identities.get('idt_c'), 'deleted', 'acknowledged, even when sent twice');
});
