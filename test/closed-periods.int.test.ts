// Closed periods over HTTP (http/routes/period-routes.ts, engine/closed-periods.ts): POST /ledgers/:id/periods
// closes a ledger's books through a moment and answers the period with the position of the log's checksum
// chain it seals, which is exactly where the log stood before the close (read back from the log itself);
// GET lists the periods; a back-dated write into the period is refused 409 TXN_PERIOD_CLOSED on the
// synchronous, queued and bulk paths; the close is on the change feed; and after a snapshot and a
// restart the periods are there and still refuse, and `folio verify` checks every seal and that nothing
// after a close moved the ledger inside it.

import t from 'tap';
import { verifyDataDir } from '../ops/verify.js';
import { LogReader } from '../wal/log-reader.js';
import { snapshotNow, startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';
import { timeText } from '../wire/views.js';

const DAY = 86_400_000;

async function created(server: TestServer, path: string, body: unknown): Promise<any> {
  const answer = await server.request('POST', path, body);
  if (answer.status !== 201) throw new Error(`${path}: ${answer.status} ${answer.text}`);
  return answer.body;
}

const iso = (ms: number): string => new Date(ms).toISOString();

t.test('closing a period seals the chain and refuses back-dated writes into it, across a restart', async (t) => {
  const dataDir = tempDataDir('periods');
  let server = await startTestServer({ dataDir, snapshots: { every_events: 0, every_seconds: 0, keep: 2 } });
  const ledger = (await created(server, '/ledgers', { name: 'books' })).ledger_id as string;
  const other = (await created(server, '/ledgers', { name: 'other books' })).ledger_id as string;
  const cash = (await created(server, '/balances', { ledger_id: ledger, currency: 'USD' })).balance_id as string;
  const sales = (await created(server, '/balances', { ledger_id: ledger, currency: 'USD' })).balance_id as string;
  const elsewhere = (await created(server, '/balances', { ledger_id: other, currency: 'USD' })).balance_id as string;
  const monthEnd = Date.now() - 10 * DAY;
  const transfer = (fields: Record<string, unknown>): Record<string, unknown> => ({
    description: 'sale', precise_amount: 100, currency: 'USD', source: '@world', destination: cash, allow_overdraft: true, skip_queue: true, ...fields,
  });
  await created(server, '/transactions', transfer({ effective_date: iso(monthEnd - DAY) }));

  const refusals: Array<[string, unknown, number, string]> = [
    ['closes_at in the future', { closes_at: iso(Date.now() + DAY) }, 400, 'PERIOD_CLOSES_AT_INVALID'],
    ['closes_at not a time', { closes_at: 'end of April' }, 400, 'GEN_VALIDATION_ERROR'],
    ['closes_at missing', {}, 400, 'GEN_VALIDATION_ERROR'],
    ['closes_at before 1970', { closes_at: '1969-12-31T00:00:00Z' }, 400, 'GEN_VALIDATION_ERROR'],
  ];
  for (const [label, body, status, code] of refusals) {
    const answer = await server.request('POST', `/ledgers/${ledger}/periods`, body);
    t.equal(answer.status, status, label);
    t.equal(answer.body.error_detail.code, code, `${label}: ${code}`);
  }
  const unknown = await server.request('POST', '/ledgers/ldg_missing/periods', { closes_at: iso(monthEnd) });
  t.equal(unknown.body.error_detail.code, 'LGR_NOT_FOUND');

  const closing = await server.request('POST', `/ledgers/${ledger}/periods`, { closes_at: iso(monthEnd) });
  t.equal(closing.status, 201, closing.text);
  const period = closing.body;
  t.match(period, { period_id: /^prd_/, ledger_id: ledger, closes_at: timeText(monthEnd), sealed_seq: Number, sealed_hash: /^[0-9a-f]{64}$/ });
  const seq = Number(closing.headers['x-folio-seq']);
  t.equal(period.sealed_seq, seq - 1, 'it seals the log right before the close');
  const reader = LogReader.open(dataDir);
  try {
    const records = [...reader.logRecords()];
    const sealedRecord = records.find((record) => record.last_seq === period.sealed_seq);
    t.ok(sealedRecord, 'a log record ends exactly at sealed_seq');
    t.equal(sealedRecord?.checksum.toString('hex'), period.sealed_hash, 'and sealed_hash is its checksum');
    const closeRecord = records.find((record) => record.first_seq === seq);
    t.equal(closeRecord?.prev_checksum.toString('hex'), period.sealed_hash, 'the close opens the next record, chained to it');
  } finally {
    await reader.close();
  }
  const again = await server.request('POST', `/ledgers/${ledger}/periods`, { closes_at: iso(monthEnd - DAY) });
  t.equal(again.status, 409);
  t.equal(again.body.error_detail.code, 'PERIOD_NOT_AFTER_LAST');

  const refusedWrites = async (label: string): Promise<void> => {
    for (const [how, path, body] of [
      ['synchronous', '/transactions', transfer({ effective_date: iso(monthEnd) })],
      ['queued', '/transactions', transfer({ effective_date: iso(monthEnd - 5 * DAY), skip_queue: false })],
      ['a balance of the ledger as destination', '/transactions', transfer({ source: elsewhere, destination: sales, effective_date: iso(monthEnd - 1) })],
      ['a bulk item', '/transactions/bulk', { skip_queue: true, transactions: [transfer({ reference: `ok-${label}` }), transfer({ effective_date: iso(monthEnd) })] }],
    ] as Array<[string, string, unknown]>) {
      const answer = await server.request('POST', path, body);
      t.equal(answer.status, path.endsWith('bulk') ? 201 : 409, `${label}: ${how}`);
      if (path.endsWith('bulk')) t.match(answer.body, { status: 'partial', transaction_count: 1, failed: { index: 1, error: { code: 'TXN_PERIOD_CLOSED' } } }, `${label}: ${how} stops the batch there`);
      else t.equal(answer.body.error_detail.code, 'TXN_PERIOD_CLOSED', `${label}: ${how}: TXN_PERIOD_CLOSED`);
    }
    const after = await server.request('POST', '/transactions', transfer({ effective_date: iso(monthEnd + 1) }));
    t.equal(after.status, 201, `${label}: dated after the period: applied`);
    const otherLedger = await server.request('POST', '/transactions', transfer({ destination: elsewhere, effective_date: iso(monthEnd - DAY) }));
    t.equal(otherLedger.status, 201, `${label}: another ledger's balance: applied`);
    const listed = await server.request('GET', `/ledgers/${ledger}/periods`);
    t.same(listed.body, [period], `${label}: listed`);
  };
  await refusedWrites('running');

  const feed = await server.request('GET', `/events?after=${seq - 1}&limit=1`);
  t.match(feed.body.events[0], { seq, type: 'period.closed', periods: [period] }, 'the close is on the change feed');
  t.same((await server.request('GET', '/ledgers/ldg_missing/periods')).body.error_detail.code, 'LGR_NOT_FOUND');

  await snapshotNow(server);
  await server.stop();
  server = await startTestServer({ dataDir, snapshots: { every_events: 0, every_seconds: 0, keep: 2 } });
  await refusedWrites('after a snapshot and a restart');
  await server.stop();

  const report = verifyDataDir({ dataDir });
  t.same(report.faults, [], 'folio verify finds every seal where the chain stood and nothing dated inside the period after it');
  t.equal(report.snapshots.length, 1);
  t.ok(report.snapshots.every((check) => check.ok), 'the snapshot holding the period matches the replay');
});
