// Exchange transactions over the real server (engine/exchange.ts; docs/decisions-beyond.md, "Exchanges"):
// an exact exchange posts through @exchange_<CURRENCY> so each currency sums to zero and shows its rate
// and both amounts; an inexact one is refused unless it names a rounding, and each rule rounds as named;
// a hold settles in partial commits whose destination parts add up to the held amount exactly (an inexact
// part of an exchange without rounding is refused), a void releases the rest on both sides, a refund
// moves back exactly what moved; queued and bulk creates exchange too; a dry run writes nothing; bad
// requests get 400s with stable codes; reconciliation matches a statement line in either currency with
// the leg in that currency, found by reference or by amount; and a restart replays the log to the same balances.

import fs from 'node:fs';
import t from 'tap';
import { checkZeroSum, createBalance, expectError, fund, waitUntilDecided } from './helpers/http-fixture.js';
import { createRule } from './helpers/reconciliation-client.js';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

type Figures = { balance: bigint; credit: bigint; debit: bigint; inflight_credit: bigint; inflight_debit: bigint; version: number };

async function figures(server: TestServer, balanceId: string): Promise<Figures> {
  const body = (await server.request('GET', `/balances/${balanceId}`)).body;
  return {
    balance: BigInt(body.balance), credit: BigInt(body.credit_balance), debit: BigInt(body.debit_balance),
    inflight_credit: BigInt(body.inflight_credit_balance), inflight_debit: BigInt(body.inflight_debit_balance), version: body.version,
  };
}

async function exchangeBalanceId(server: TestServer, currency: string): Promise<string | undefined> {
  const response = await server.request('GET', `/balances/indicator/${encodeURIComponent(`@exchange_${currency}`)}/currency/${currency}`);
  return response.status === 200 ? (response.body.balance_id as string) : undefined;
}

t.test('exchanges end to end, and the same balances after a restart', async (t) => {
  const dataDir = tempDataDir('folio-exchanges');
  let server = await startTestServer({ dataDir });
  t.teardown(async () => {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const alice = (await createBalance(server)).balance_id as string;
  const bob = (await createBalance(server, { currency: 'EUR' })).balance_id as string;
  await fund(server, alice, 1_000_000);
  const exchange = (fields: Record<string, unknown> = {}) => ({
    description: 'fx', precise_amount: 1000, precision: 100, currency: 'USD', source: alice, destination: bob,
    rate: '0.9', destination_currency: 'EUR', destination_precision: 100, skip_queue: true, ...fields,
  });

  await t.test('an exact exchange: one record, both legs, each currency sums to zero', async (t) => {
    const answer = await server.request('POST', '/transactions', exchange());
    t.equal(answer.status, 201, answer.text);
    t.equal(answer.body.status, 'APPLIED');
    t.equal(answer.body.currency, 'USD');
    t.equal(answer.body.precise_amount, 1000);
    t.equal(answer.body.rate, '0.9');
    t.equal(answer.body.destination_currency, 'EUR');
    t.equal(answer.body.destination_precise_amount, 900);
    t.equal(answer.body.destination_precision, 100);
    t.equal(answer.body.destination_amount, 9);
    t.equal(answer.body.destination_amount_string, '9');
    t.notOk('rounding' in answer.body, 'no rounding named, none shown');
    const usd = await exchangeBalanceId(server, 'USD');
    const eur = await exchangeBalanceId(server, 'EUR');
    t.ok(usd && eur, 'the exchange balances were created on first use');
    t.same(await figures(server, alice), { balance: 999_000n, credit: 1_000_000n, debit: 1000n, inflight_credit: 0n, inflight_debit: 0n, version: 2 });
    t.match(await figures(server, bob), { balance: 900n, credit: 900n, debit: 0n });
    t.match(await figures(server, usd!), { balance: 1000n, credit: 1000n, debit: 0n }, '@exchange_USD took the dollars');
    t.match(await figures(server, eur!), { balance: -900n, credit: 0n, debit: 900n }, '@exchange_EUR paid the euros (allowed below zero)');
    const read = await server.request('GET', `/transactions/${answer.body.transaction_id}`);
    t.equal(read.body.destination_precise_amount, 900, 'read back the same');
    checkZeroSum(t, server, 'after an exchange');
  });

  await t.test('include_balances: all four balances an exchange moved, as it left them', async (t) => {
    const answer = await server.request('POST', '/transactions?include_balances=true', exchange({ precise_amount: 500 }));
    t.equal(answer.status, 201, answer.text);
    const usd = await exchangeBalanceId(server, 'USD');
    const eur = await exchangeBalanceId(server, 'EUR');
    const shown = new Map<string, any>((answer.body.balances as any[]).map((balance) => [balance.balance_id, balance]));
    t.same([...shown.keys()].sort(), [alice, bob, usd, eur].sort(), 'the source, the destination and both exchange balances');
    for (const id of [alice, bob, usd!, eur!]) {
      const read = (await server.request('GET', `/balances/${id}`)).body;
      t.equal(String(shown.get(id)?.balance), String(read.balance), `${id} as the write left it`);
    }
  });

  await t.test('inexact without rounding: 400 TXN_EXCHANGE_INEXACT, nothing written', async (t) => {
    const before = await figures(server, alice);
    expectError(t, await server.request('POST', '/transactions', exchange({ precise_amount: 1, rate: '1.0845' })), 400, 'TXN_EXCHANGE_INEXACT', 'inexact');
    expectError(t, await server.request('POST', '/transactions', exchange({ precise_amount: 1, rate: '0.1', rounding: 'down' })), 400, 'TXN_EXCHANGE_INEXACT', 'rounds to nothing');
    t.same(await figures(server, alice), before, 'the source did not move');
  });

  await t.test('each rounding rule, as named and shown', async (t) => {
    const cases: Array<[number, string, string, number]> = [
      [1, '1.0845', 'down', 1], [1, '1.0845', 'half_even', 1], [1, '1.0845', 'up', 2],
      [25, '0.1', 'down', 2], [25, '0.1', 'half_even', 2], [25, '0.1', 'up', 3], [15, '0.1', 'half_even', 2],
    ];
    for (const [amount, rate, rounding, expected] of cases) {
      const before = await figures(server, bob);
      const answer = await server.request('POST', '/transactions', exchange({ precise_amount: amount, rate, rounding }));
      t.equal(answer.status, 201, answer.text);
      t.equal(answer.body.destination_precise_amount, expected, `${amount} at ${rate}, ${rounding}: ${expected}`);
      t.equal(answer.body.rounding, rounding);
      t.equal((await figures(server, bob)).balance - before.balance, BigInt(expected), 'the destination got exactly that');
    }
    const pair = await server.request('POST', '/transactions', exchange({ precise_amount: 300, rate: { numerator: 1085, denominator: 1000 }, rounding: 'down' }));
    t.equal(pair.status, 201, pair.text);
    t.equal(pair.body.rate, '217/200', 'a pair is shown reduced');
    t.equal(pair.body.destination_precise_amount, 325, '300 × 1.085 = 325.5, down');
    checkZeroSum(t, server, 'after rounded exchanges');
  });

  await t.test('a hold settled in partial commits: the parts add up to the held destination amount exactly', async (t) => {
    const usd = (await exchangeBalanceId(server, 'USD'))!;
    const eur = (await exchangeBalanceId(server, 'EUR'))!;
    const [aliceBefore, bobBefore, usdBefore, eurBefore] = await Promise.all([figures(server, alice), figures(server, bob), figures(server, usd), figures(server, eur)]);
    const hold = await server.request('POST', '/transactions', exchange({ inflight: true, rate: '1.0845', rounding: 'half_even' }));
    t.equal(hold.status, 201, hold.text);
    t.equal(hold.body.status, 'INFLIGHT');
    t.equal(hold.body.destination_precise_amount, 1084, '1000 × 1.0845 = 1084.5, half to even');
    t.equal((await figures(server, bob)).inflight_credit - bobBefore.inflight_credit, 1084n);
    t.equal((await figures(server, eur)).inflight_debit - eurBefore.inflight_debit, 1084n);
    const id = hold.body.transaction_id as string;
    const parts: number[] = [];
    for (const amount of [333, 333]) {
      const commit = await server.request('PUT', `/transactions/inflight/${id}`, { status: 'commit', precise_amount: amount, skip_queue: true });
      t.equal(commit.status, 200, commit.text);
      parts.push(Number(commit.body.destination_precise_amount));
    }
    t.same(parts, [361, 361], '333 → 361.1385 → 361; 666 → 722.277 → 722, so 361');
    const last = await server.request('PUT', `/transactions/inflight/${id}`, { status: 'commit', skip_queue: true });
    t.equal(last.status, 200, last.text);
    t.equal(last.body.precise_amount, 334, 'the rest of the source');
    t.equal(last.body.destination_precise_amount, 362, 'and exactly the rest of the destination');
    t.equal(parts[0]! + parts[1]! + Number(last.body.destination_precise_amount), 1084);
    t.equal((await server.request('GET', `/transactions/${id}`)).body.status, 'APPLIED');
    const [aliceAfter, bobAfter, usdAfter, eurAfter] = await Promise.all([figures(server, alice), figures(server, bob), figures(server, usd), figures(server, eur)]);
    t.equal(aliceAfter.balance - aliceBefore.balance, -1000n);
    t.equal(bobAfter.balance - bobBefore.balance, 1084n);
    t.equal(usdAfter.balance - usdBefore.balance, 1000n);
    t.equal(eurAfter.balance - eurBefore.balance, -1084n);
    for (const [after, before] of [[aliceAfter, aliceBefore], [bobAfter, bobBefore], [usdAfter, usdBefore], [eurAfter, eurBefore]] as const) {
      t.equal(after.inflight_credit, before.inflight_credit, 'nothing left held');
      t.equal(after.inflight_debit, before.inflight_debit, 'nothing left held');
    }
    checkZeroSum(t, server, 'after a hold committed in parts');
  });

  await t.test('a partial commit that does not convert exactly, with no rounding named: refused; the whole is not', async (t) => {
    const hold = await server.request('POST', '/transactions', exchange({ inflight: true, precise_amount: 2, rate: '1.5' }));
    t.equal(hold.body.destination_precise_amount, 3);
    const id = hold.body.transaction_id as string;
    expectError(t, await server.request('PUT', `/transactions/inflight/${id}`, { status: 'commit', precise_amount: 1, skip_queue: true }), 400, 'TXN_EXCHANGE_INEXACT', '1 × 1.5');
    const whole = await server.request('PUT', `/transactions/inflight/${id}`, { status: 'commit', skip_queue: true });
    t.equal(whole.status, 200, whole.text);
    t.equal(whole.body.destination_precise_amount, 3);
  });

  let voidedHold = '';
  await t.test('a void releases the rest on both sides', async (t) => {
    const [aliceBefore, bobBefore] = await Promise.all([figures(server, alice), figures(server, bob)]);
    const hold = await server.request('POST', '/transactions', exchange({ inflight: true }));
    voidedHold = hold.body.transaction_id as string;
    const commit = await server.request('PUT', `/transactions/inflight/${voidedHold}`, { status: 'commit', precise_amount: 100, skip_queue: true });
    t.equal(commit.body.destination_precise_amount, 90);
    const voided = await server.request('PUT', `/transactions/inflight/${voidedHold}`, { status: 'void', skip_queue: true });
    t.equal(voided.status, 200, voided.text);
    t.equal(voided.body.precise_amount, 900, 'the source\'s rest');
    t.equal(voided.body.destination_precise_amount, 810, 'the destination\'s rest');
    const [aliceAfter, bobAfter] = await Promise.all([figures(server, alice), figures(server, bob)]);
    t.equal(aliceAfter.balance - aliceBefore.balance, -100n);
    t.equal(bobAfter.balance - bobBefore.balance, 90n);
    t.equal(aliceAfter.inflight_debit, aliceBefore.inflight_debit);
    t.equal(bobAfter.inflight_credit, bobBefore.inflight_credit);
    checkZeroSum(t, server, 'after a void');
  });

  await t.test('a refund moves back exactly what moved, at the inverse rate', async (t) => {
    const original = await server.request('POST', '/transactions', exchange());
    const [aliceBefore, bobBefore] = await Promise.all([figures(server, alice), figures(server, bob)]);
    const refund = await server.request('POST', `/refund-transaction/${original.body.transaction_id}`, { skip_queue: true });
    t.equal(refund.status, 201, refund.text);
    t.equal(refund.body.status, 'APPLIED');
    t.equal(refund.body.currency, 'EUR');
    t.equal(refund.body.precise_amount, 900);
    t.equal(refund.body.destination_currency, 'USD');
    t.equal(refund.body.destination_precise_amount, 1000);
    t.equal(refund.body.rate, '10/9', 'the inverse of 0.9, which has no decimal end');
    const [aliceAfter, bobAfter] = await Promise.all([figures(server, alice), figures(server, bob)]);
    t.equal(aliceAfter.balance - aliceBefore.balance, 1000n);
    t.equal(bobAfter.balance - bobBefore.balance, -900n);
    const partial = await server.request('POST', `/refund-transaction/${voidedHold}`, { skip_queue: true });
    t.equal(partial.status, 201, partial.text);
    t.equal(partial.body.precise_amount, 90, 'the committed part of the voided hold, in euros');
    t.equal(partial.body.destination_precise_amount, 100, 'back into the dollars it came from');
    checkZeroSum(t, server, 'after refunds');
  });

  await t.test('queued and bulk creates exchange too', async (t) => {
    const queued = await server.request('POST', '/transactions', exchange({ skip_queue: false }));
    t.equal(queued.status, 201, queued.text);
    const decided = await waitUntilDecided(server, queued.body.transaction_id as string);
    t.equal(decided.body.status, 'APPLIED', decided.text);
    t.equal(decided.body.destination_precise_amount, 900);
    const bulk = await server.request('POST', '/transactions/bulk', { atomic: true, skip_queue: true, transactions: [exchange({ reference: 'fx-bulk-1' }), exchange({ reference: 'fx-bulk-2', precise_amount: 1, rate: '1.0845' })] });
    expectError(t, bulk, 400, 'TXN_EXCHANGE_INEXACT', 'an atomic bulk with an inexact item');
    const good = await server.request('POST', '/transactions/bulk', { skip_queue: true, transactions: [exchange({ reference: 'fx-bulk-3' })] });
    t.equal(good.status, 201, good.text);
    t.equal((await server.request('GET', '/transactions/reference/fx-bulk-3')).body.destination_precise_amount, 900);
    checkZeroSum(t, server, 'after queued and bulk exchanges');
  });

  await t.test('a dry run writes nothing, not even the exchange balances', async (t) => {
    const carol = (await createBalance(server, { currency: 'GBP' })).balance_id as string;
    const dave = (await createBalance(server, { currency: 'JPY' })).balance_id as string;
    await fund(server, carol, 10_000, 'GBP');
    const before = await figures(server, carol);
    const dry = await server.request('POST', '/transactions', {
      description: 'fx', precise_amount: 1000, precision: 100, currency: 'GBP', source: carol, destination: dave,
      rate: '190.5', destination_currency: 'JPY', destination_precision: 1, skip_queue: true, dry_run: true,
    });
    t.equal(dry.status, 200, dry.text);
    t.equal(dry.body.would_apply, true);
    // The projection shows all four balances it would move, the exchange balances by the indicator they would be created with.
    const projected = new Map<string, any>((dry.body.balances as any[]).map((balance) => [balance.balance_id, balance]));
    t.same([...projected.keys()].sort(), [carol, dave, '@exchange_GBP', '@exchange_JPY'].sort(), 'the projection names all four balances');
    t.equal(String(projected.get('@exchange_GBP')?.resulting_balance), '1000', '@exchange_GBP would take 1000');
    t.equal(String(projected.get('@exchange_JPY')?.resulting_balance), '-1905', '@exchange_JPY would pay 1905');
    t.same(await figures(server, carol), before);
    t.equal((await figures(server, dave)).balance, 0n);
    t.equal(await exchangeBalanceId(server, 'GBP'), undefined, 'no @exchange_GBP');
    t.equal(await exchangeBalanceId(server, 'JPY'), undefined, 'no @exchange_JPY');
  });

  await t.test('bad exchanges: 400 with the field named', async (t) => {
    const refused: Array<[Record<string, unknown>, string, string]> = [
      [{ destination_currency: 'USD' }, 'TXN_VALIDATION_ERROR', 'destination_currency'],
      [{ rate: '0' }, 'TXN_VALIDATION_ERROR', 'rate'],
      [{ rate: '-1.5' }, 'TXN_VALIDATION_ERROR', 'rate'],
      [{ rate: '1.2345678901234567891' }, 'TXN_VALIDATION_ERROR', 'rate'],
      [{ rate: undefined }, 'TXN_VALIDATION_ERROR', 'rate'],
      [{ destination_currency: undefined }, 'TXN_VALIDATION_ERROR', 'destination_currency'],
      [{ destination_precision: 1.5 }, 'TXN_VALIDATION_ERROR', 'destination_precision'],
      [{ destination_precision: '10000000000000000000' }, 'TXN_VALIDATION_ERROR', 'destination_precision'],
      [{ rounding: 'nearest' }, 'TXN_VALIDATION_ERROR', 'rounding'],
      [{ destination: undefined, destinations: [{ identifier: bob, distribution: 'left' }] }, 'TXN_VALIDATION_ERROR', 'destinations'],
    ];
    for (const [fields, code, field] of refused) {
      const answer = await server.request('POST', '/transactions', exchange(fields));
      expectError(t, answer, 400, code, JSON.stringify(fields));
      t.ok(field in (answer.body.error_detail.details ?? {}), `${field} named: ${answer.text}`);
    }
    const other = (await createBalance(server)).balance_id as string;
    expectError(t, await server.request('POST', '/transactions', exchange({ destination: other })), 400, 'TXN_CURRENCY_MISMATCH', 'a destination not in the destination currency');
  });

  await t.test('a backdated exchange into a period the exchange balances\' ledger closed: 409 TXN_PERIOD_CLOSED', async (t) => {
    const ledger = (await server.request('POST', '/ledgers', { name: 'desk' })).body.ledger_id as string;
    const frank = (await createBalance(server, { ledger_id: ledger })).balance_id as string;
    const grace = (await createBalance(server, { ledger_id: ledger, currency: 'EUR' })).balance_id as string;
    await fund(server, frank, 10_000);
    const closesAt = Date.now() - 60_000;
    const closed = await server.request('POST', '/ledgers/general_ledger_id/periods', { closes_at: new Date(closesAt).toISOString() });
    t.equal(closed.status, 201, closed.text);
    const dated = (at: number) => exchange({ source: frank, destination: grace, effective_date: new Date(at).toISOString() });
    expectError(t, await server.request('POST', '/transactions', dated(closesAt - 60_000)), 409, 'TXN_PERIOD_CLOSED', 'dated in the closed period');
    t.equal((await figures(server, frank)).balance, 10_000n, 'nothing moved');
    const after = await server.request('POST', '/transactions', dated(closesAt + 1_000));
    t.equal(after.status, 201, after.text);
  });

  await t.test('fund lineage: the source\'s tagged funds are spent, the destination is credited untagged', async (t) => {
    const identity = (await server.request('POST', '/identities', { identity_type: 'individual', first_name: 'Erin', last_name: 'User', category: 'individual' })).body;
    const tracked = (await createBalance(server, { identity_id: identity.identity_id, track_fund_lineage: true })).balance_id as string;
    const eurTracked = (await createBalance(server, { currency: 'EUR', identity_id: identity.identity_id, track_fund_lineage: true })).balance_id as string;
    const deposit = await server.request('POST', '/transactions', {
      description: 'in', source: '@world', destination: tracked, precise_amount: 5000, precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true,
      meta_data: { BLNK_LINEAGE_PROVIDER: 'stripe' },
    });
    t.equal(deposit.status, 201, deposit.text);
    const spent = await server.request('POST', '/transactions', exchange({ source: tracked, destination: eurTracked, precise_amount: 2000 }));
    t.equal(spent.status, 201, spent.text);
    t.equal(spent.body.destination_precise_amount, 1800);
    const lineage = await server.request('GET', `/transactions/${spent.body.transaction_id}/lineage`);
    t.equal(lineage.status, 200, lineage.text);
    t.match(lineage.text, /stripe/, 'the exchange drew on the source\'s tagged funds');
    const source = await server.request('GET', `/balances/${tracked}/lineage`);
    t.equal(source.status, 200, source.text);
    t.match(source.body.providers, [{ provider: 'stripe', spent: 2000, available: 3000 }], 'spent from the source');
    const destination = await server.request('GET', `/balances/${eurTracked}/lineage`);
    t.equal(destination.status, 200, destination.text);
    t.same(destination.body.providers ?? [], [], 'provider tags do not cross currencies');
    t.match(await figures(server, eurTracked), { balance: 1800n });
    const hold = await server.request('POST', '/transactions', exchange({ source: tracked, destination: eurTracked, precise_amount: 1000, inflight: true }));
    t.equal(hold.status, 201, hold.text);
    const commit = await server.request('PUT', `/transactions/inflight/${hold.body.transaction_id}`, { status: 'commit', precise_amount: 400, skip_queue: true });
    t.equal(commit.status, 200, commit.text);
    const voided = await server.request('PUT', `/transactions/inflight/${hold.body.transaction_id}`, { status: 'void', skip_queue: true });
    t.equal(voided.status, 200, voided.text);
    t.match((await server.request('GET', `/balances/${tracked}/lineage`)).body.providers, [{ provider: 'stripe', spent: 2400, available: 2600, inflight_spent: 0 }], 'the hold settled 4 and released 6');
    checkZeroSum(t, server, 'after exchanges from a balance that tracks lineage');
  });

  await t.test('reconciliation matches either leg, by the external record\'s currency', async (t) => {
    const made = await server.request('POST', '/transactions', exchange({ reference: 'fx-recon' }));
    t.equal(made.status, 201, made.text);
    const rule = await createRule(server, { name: 'fx', criteria: [
      { field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals', allowable_drift: 0 }, { field: 'currency', operator: 'equals' },
    ] });
    const line = (currency: string, amount: string) => ({ id: `ext-${currency}`, amount, currency, reference: 'fx-recon', description: 'fx', date: made.body.created_at, source: 'bank' });
    for (const [currency, amount, matches] of [['EUR', '9', 1], ['USD', '10', 1], ['EUR', '10', 0], ['USD', '9', 0]] as const) {
      const run = await server.request('POST', '/reconciliation/start-instant', {
        external_transactions: [line(currency, amount)], strategy: 'one_to_one', matching_rule_ids: [rule], dry_run: true,
      });
      t.equal(run.status, 200, run.text);
      t.equal(run.body.matches.length, matches, `${amount} ${currency}: ${matches ? 'matched' : 'not matched'} (${run.text})`);
    }
  });

  await t.test('an amount lookup finds either leg: by amount alone, and by amount within a time window', async (t) => {
    // 123.40 USD at 0.9 is 111.06 EUR; no other transaction here has either amount, and none is in EUR,
    // so only the exchange's destination leg can bring EUR's precision and this amount to the lookup.
    const made = await server.request('POST', '/transactions', exchange({ reference: 'fx-by-amount', precise_amount: 12340 }));
    t.equal(made.status, 201, made.text);
    t.equal(made.body.destination_precise_amount, 11106);
    const byAmount = await createRule(server, { name: 'fx amount', criteria: [
      { field: 'amount', operator: 'equals', allowable_drift: 0 }, { field: 'currency', operator: 'equals' },
    ] });
    const inWindow = await createRule(server, { name: 'fx amount and day', criteria: [
      { field: 'amount', operator: 'equals', allowable_drift: 0 }, { field: 'currency', operator: 'equals' },
      { field: 'date', operator: 'equals', allowable_drift: 86_400 },
    ] });
    const line = (currency: string, amount: string) => ({ id: `ext-${currency}-${amount}`, amount, currency, reference: 'bank-line', description: 'statement', date: made.body.created_at, source: 'bank' });
    for (const rule of [byAmount, inWindow]) {
      for (const [currency, amount, matched] of [['EUR', '111.06', true], ['USD', '123.4', true], ['EUR', '123.4', false], ['USD', '111.06', false]] as const) {
        const run = await server.request('POST', '/reconciliation/start-instant', {
          external_transactions: [line(currency, amount)], strategy: 'one_to_one', matching_rule_ids: [rule], dry_run: true,
        });
        t.equal(run.status, 200, run.text);
        const ids = (run.body.matches as Array<{ internal_transaction_ids: string[] }>).flatMap((match) => match.internal_transaction_ids);
        t.same(ids, matched ? [made.body.transaction_id] : [], `${amount} ${currency}, rule ${rule === byAmount ? 'by amount' : 'by amount and day'}: ${run.text}`);
      }
    }
  });

  await t.test('a restart replays the log to the same balances', async (t) => {
    const ids = [alice, bob, (await exchangeBalanceId(server, 'USD'))!, (await exchangeBalanceId(server, 'EUR'))!];
    const before = await Promise.all(ids.map((id) => figures(server, id)));
    const listed = await server.request('GET', '/transactions?limit=100');
    t.ok((listed.body as Array<Record<string, unknown>>).some((record) => record.rate === '10/9' && record.destination_precise_amount === 1000), 'the list shows the exchange fields');
    const records = (listed.body as Array<{ transaction_id: string }>).map((record) => record.transaction_id);
    const texts = await Promise.all(records.map(async (id) => (await server.request('GET', `/transactions/${id}`)).text));
    await server.stop();
    server = await startTestServer({ dataDir });
    t.same(await Promise.all(ids.map((id) => figures(server, id))), before, 'every balance as before');
    t.same(await Promise.all(records.map(async (id) => (await server.request('GET', `/transactions/${id}`)).text)), texts, 'every transaction as before, exchange fields included');
    checkZeroSum(t, server, 'after the restart');
    const again = await server.request('POST', '/transactions', exchange());
    t.equal(again.status, 201, 'exchanges go on through the same exchange balances');
    t.equal(await exchangeBalanceId(server, 'USD'), ids[2]);
  });
});
