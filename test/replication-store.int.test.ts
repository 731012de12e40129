// The replication SQL against a real PostgreSQL, and a rejoining node's alignment against a real ledger:
//   - appends land only under the current term and right after the log's end; a term taken while a
//     leader pipelines appends either waits for them or refuses them, so every record of the old term
//     precedes every record of the new, and the new leader, reading to the end after taking the term,
//     sees them all; two nodes trying for the same term: one gets it; renewals only by the holder;
//   - a batch of records lands in one transaction or not at all: under the current term, right after
//     the end, contiguous inside; the leader's replicator gathers the records handed to it while a
//     statement is in flight into the next one (fewer transactions than records), and a refusal refuses
//     every record after it, sent or gathered;
//   - alignment drops the tail the group never committed that the node sealed as the group's leader, and
//     the lookups, the query index and the snapshots follow: the dropped transfers are not found by id, by
//     reference, by filter, a snapshot taken after them is gone, and their references are free again; a
//     tail sealed without the group (a single node's, acknowledged alone), also after a leader's, is
//     refused naming its seqs, with nothing dropped; a log that differs from the group's from its first
//     record, or by more than the limit, is refused with nothing dropped.

import pg from 'pg';
import t from 'tap';
import { startPostgres } from '../bench/postgres/postgres-server.js';
import { AcknowledgedAloneError, alignWithGroup, DivergedLogError } from '../replication/log-alignment.js';
import { readLease, renewLease, takeLease } from '../replication/postgres/lease-store.js';
import { connectPostgres, DEFAULT_CONNECTION_LIMITS } from '../replication/postgres/postgres-client.js';
import { AppendRefused, appendRecord, appendRecords, logEnd, termsInLog } from '../replication/postgres/postgres-log-store.js';
import { PostgresRecordReplicator } from '../replication/record-replicator.js';
import { ensureSchema } from '../replication/postgres/replication-schema.js';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { snapshotNow, startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

const postgres = await startPostgres({ label: 'repl-store', settings: { max_connections: '30', shared_buffers: '16MB' } });
t.teardown(() => postgres.stop());

const open = (name: string, pipeline = false) => connectPostgres({ url: postgres.url, limits: DEFAULT_CONNECTION_LIMITS, application_name: name, pipeline });

async function freshSchema(): Promise<void> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  await client.query('DROP TABLE IF EXISTS folio_log, folio_lease, folio_nodes, folio_group');
  await client.end();
  const schema = await open('schema');
  await ensureSchema(schema);
  await schema.end();
}

const holder = (name: string) => ({ holder: `${name}/test`, name, url: `http://${name}.invalid` });
const bytes = (seq: number) => Buffer.alloc(48, seq % 251);

t.test('the schema is made once by nodes starting together', async (t) => {
  const clients = await Promise.all([open('one'), open('two'), open('three')]);
  const plain = new pg.Client({ connectionString: postgres.url });
  await plain.connect();
  await plain.query('DROP TABLE IF EXISTS folio_log, folio_lease, folio_nodes, folio_group');
  await plain.end();
  await Promise.all(clients.map((client) => ensureSchema(client)));
  const lease = await readLease(clients[0]!);
  t.equal(lease.term, 0, 'the lease starts at term 0, held by nobody');
  t.equal(lease.holder, '');
  await Promise.all(clients.map((client) => client.end()));
});

t.test('appends land only under the current term and right after the end', async (t) => {
  await freshSchema();
  const client = await open('leader');
  t.teardown(() => client.end());
  t.equal(await takeLease(client, 0, holder('a'), 60_000), 1, 'the first term');
  await appendRecord(client, { term: 1, first_seq: 1, last_seq: 3, previous_first_seq: 0, bytes: bytes(1) });
  await appendRecord(client, { term: 1, first_seq: 4, last_seq: 4, previous_first_seq: 1, bytes: bytes(4) });
  await t.rejects(appendRecord(client, { term: 2, first_seq: 5, last_seq: 5, previous_first_seq: 4, bytes: bytes(5) }), AppendRefused, 'a term that is not current');
  await t.rejects(appendRecord(client, { term: 1, first_seq: 6, last_seq: 6, previous_first_seq: 4, bytes: bytes(6) }), AppendRefused, 'a gap');
  await t.rejects(appendRecord(client, { term: 1, first_seq: 5, last_seq: 5, previous_first_seq: 1, bytes: bytes(5) }), AppendRefused, 'a record that does not follow the last one');
  await t.rejects(appendRecord(client, { term: 1, first_seq: 4, last_seq: 4, previous_first_seq: 1, bytes: bytes(4) }), /duplicate key/, 'a second record at a position');
  t.same((await logEnd(client))?.last_seq, 4, 'the log ends where the landed appends put it');
  t.equal(await renewLease(client, 1, 'b/test', 60_000), false, 'only the holder renews');
  t.equal(await renewLease(client, 1, 'a/test', 60_000), true);
  t.equal(await takeLease(client, 1, holder('b'), 60_000), undefined, 'a live lease is not taken');
});

t.test('a term taken while a leader pipelines appends: the old term ends before the new one begins', async (t) => {
  for (let round = 0; round < 5; round += 1) {
    await freshSchema();
    const control = await open('control');
    const leader = await open('leader', true);
    const taker = await open('taker');
    const rival = await open('rival');
    t.equal(await takeLease(control, 0, holder('a'), 60_000), 1);
    let previous = 0;
    const outcomes: Array<Promise<string>> = [];
    let refused = false;
    const pipelining = (async () => {
      // Appends keep going out, pipelined (eight on the wire at a time), until one is refused.
      for (let first = 1; !refused && first <= 5_000; first += 1) {
        const outcome = appendRecord(leader, { term: 1, first_seq: first, last_seq: first, previous_first_seq: previous, bytes: bytes(first) })
          .then(() => 'landed', (error: Error) => {
            refused = true;
            return error.name;
          });
        outcomes.push(outcome);
        previous = first;
        if (outcomes.length >= 8) await outcomes[outcomes.length - 8];
      }
    })();
    // Once some appends have landed, the lease lapses and two nodes try for the next term at once.
    const after = 10 + round * 7;
    while (outcomes.length <= after) await new Promise((resolve) => setImmediate(resolve));
    await outcomes[after];
    await control.query('UPDATE folio_lease SET expires_at = clock_timestamp()');
    const seen = (await readLease(taker)).term;
    const [mine, theirs] = await Promise.all([
      takeLease(taker, seen, holder('b'), 60_000),
      takeLease(rival, seen, holder('c'), 60_000),
    ]);
    t.equal([mine, theirs].filter((term) => term !== undefined).length, 1, `round ${round}: of two nodes trying for the next term, one gets it`);
    const taken = await readLease(taker);
    const newLeader = taken.holder === 'b/test' ? taker : rival;
    const endAfterTake = (await logEnd(newLeader))?.last_seq ?? 0;
    await pipelining;
    const results = await Promise.all(outcomes);
    const landed = results.filter((result) => result === 'landed').length;
    t.same(results.slice(0, landed), Array(landed).fill('landed'), `round ${round}: the old leader's appends land as a prefix (${landed}), then are refused`);
    t.equal(endAfterTake, landed, `round ${round}: read after the take, the log ends at the last of them`);
    await appendRecord(newLeader, { term: taken.term, first_seq: endAfterTake + 1, last_seq: endAfterTake + 1, previous_first_seq: endAfterTake, bytes: bytes(0) });
    const terms = await termsInLog(newLeader);
    t.same(terms.map((range) => range.term), landed > 0 ? [1, 2] : [2], `round ${round}: one term after the other`);
    await Promise.all([control, leader, taker, rival].map((client) => client.end()));
  }
});

t.test('a batch lands in one transaction, whole or not at all', async (t) => {
  await freshSchema();
  const client = await open('batch', true);
  t.teardown(() => client.end());
  t.equal(await takeLease(client, 0, holder('a'), 60_000), 1);
  const record = (first: number, last = first) => ({ first_seq: first, last_seq: last, bytes: bytes(first) });
  await appendRecords(client, { term: 1, previous_first_seq: 0, records: [record(1, 2), record(3), record(4, 6)] });
  const transactions = await client.query<{ first_seq: string; tx: string }>('SELECT first_seq, xmin::text AS tx FROM folio_log ORDER BY first_seq');
  t.same(transactions.rows.map((row) => Number(row.first_seq)), [1, 3, 4], 'three records');
  t.equal(new Set(transactions.rows.map((row) => row.tx)).size, 1, 'written by one transaction');
  await t.rejects(appendRecords(client, { term: 1, previous_first_seq: 4, records: [record(7), record(9)] }), AppendRefused, 'a gap inside the batch');
  await t.rejects(appendRecords(client, { term: 2, previous_first_seq: 4, records: [record(7), record(8)] }), AppendRefused, 'a term that is not current');
  await t.rejects(appendRecords(client, { term: 1, previous_first_seq: 3, records: [record(7), record(8)] }), AppendRefused, 'not following the last record');
  await t.rejects(appendRecords(client, { term: 1, previous_first_seq: 4, records: [record(7), record(8), record(8)] }), AppendRefused, 'a record twice');
  t.equal((await logEnd(client))?.last_seq, 6, 'nothing of a refused batch landed');
  await appendRecords(client, { term: 1, previous_first_seq: 4, records: [record(7), record(8)] });
  t.equal((await logEnd(client))?.last_seq, 8);
});

t.test("the leader's replicator gathers records handed over during a commit into one statement; a refusal refuses all after it", async (t) => {
  await freshSchema();
  const client = await open('replicator', true);
  t.teardown(() => client.end());
  t.equal(await takeLease(client, 0, holder('a'), 60_000), 1);
  const replicator = new PostgresRecordReplicator(client, 1, 0, { statements_in_flight_max: 1, batch_bytes_max: 1024 * 1024 });
  // Twenty records handed over at once: the first goes alone, the other nineteen wait for its commit and go together.
  const committed = Array.from({ length: 20 }, (_, index) => replicator.replicate({ first_seq: index + 1, last_seq: index + 1, bytes: bytes(index + 1) }));
  await Promise.all(committed);
  const transactions = await client.query<{ tx: string }>('SELECT xmin::text AS tx FROM folio_log ORDER BY first_seq');
  t.equal(transactions.rows.length, 20, 'every record committed');
  t.equal(new Set(transactions.rows.map((row) => row.tx)).size, 2, 'in two transactions: one statement in flight, the rest gathered behind it');

  // The term moves on: the next records are refused, those sent and those still gathering alike.
  await client.query("UPDATE folio_lease SET term = 2, holder = 'b/test'");
  const refused = Array.from({ length: 5 }, (_, index) => replicator.replicate({ first_seq: 21 + index, last_seq: 21 + index, bytes: bytes(21 + index) }).then(() => 'landed', (error: Error & { code?: string }) => error.code));
  t.same(await Promise.all(refused), Array(5).fill('REPL_NOT_LEADER'), 'all five refused to their waiters');
  t.equal(replicator.cause?.name, 'AppendRefused', 'because the group refused the append');
  await t.rejects(replicator.replicate({ first_seq: 26, last_seq: 26, bytes: bytes(26) }), { code: 'REPL_NOT_LEADER' }, 'and it takes nothing more');
  t.equal((await logEnd(client))?.last_seq, 20, 'nothing landed under the old term');
});

async function transfer(server: TestServer, reference: string, amount: number): Promise<string> {
  const response = await server.request('POST', '/transactions', {
    description: 'test', precise_amount: amount, currency: 'USD', source: '@world', destination: '@rejoin', allow_overdraft: true, skip_queue: true, reference,
  });
  if (response.status !== 201) throw new Error(`transfer ${reference}: ${response.status} ${response.text}`);
  return response.body.transaction_id as string;
}

async function filteredReferences(server: TestServer): Promise<string[]> {
  const response = await server.request('POST', '/transactions/filter', { limit: 100, filters: [] });
  if (response.status !== 200) throw new Error(`filter: ${response.status} ${response.text}`);
  return response.body.data.map((record: { reference: string }) => record.reference).sort();
}

/** Waits until the lookups and the index hold everything appended (they write behind the log). */
async function settled(server: TestServer): Promise<void> {
  const end = server.runtime.log.appendedSeq;
  await server.runtime.durable(end);
  for (let tries = 0; server.runtime.store.checkpoint < end || (server.runtime.query?.checkpointSeq ?? end) < end; tries += 1) {
    if (tries > 2_000) throw new Error('lookups or index did not catch up');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A single node's ledger whose records up to now the group has committed, as its leader's replicator would; its end seq. */
async function committedByGroup(server: TestServer, client: Awaited<ReturnType<typeof open>>): Promise<number> {
  await settled(server);
  if (await takeLease(client, 0, holder('a'), 60_000) !== 1) throw new Error('the first term was not taken');
  let previous = 0;
  for (const logRecord of server.runtime.log.logRecords(1)) {
    await appendRecord(client, { term: 1, first_seq: logRecord.first_seq, last_seq: logRecord.last_seq, previous_first_seq: previous, bytes: server.runtime.log.rawRecord(logRecord.first_seq)! });
    previous = logRecord.first_seq;
  }
  return server.runtime.log.appendedSeq;
}

t.test('a rejoining node drops the tail the group never committed, and its lookups, index and snapshots follow', async (t) => {
  await freshSchema();
  const dataDir = tempDataDir('repl-align');
  let server = await startTestServer({ dataDir, snapshots: { every_events: 0, every_seconds: 0, keep: 5 } });
  const kept = [await transfer(server, 'kept-1', 100), await transfer(server, 'kept-2', 200), await transfer(server, 'kept-3', 300)];
  const client = await open('align');
  t.teardown(() => client.end());
  const committedSeq = await committedByGroup(server, client);
  const balanceAtCommit = (await server.request('GET', '/balances/indicator/@rejoin/currency/USD')).body.balance;
  // Then two more, sealed here as the group's leader but never committed by the group, seen by the lookups
  // and the index (the worst case: a leader's durable records are committed ones), and a snapshot taken after them.
  await server.runtime.log.sealAsLeader();
  const dropped = [await transfer(server, 'lost-4', 400), await transfer(server, 'lost-5', 500)];
  await settled(server);
  t.same(await filteredReferences(server), ['kept-1', 'kept-2', 'kept-3', 'lost-4', 'lost-5'], 'before: the index holds all five');
  await snapshotNow(server);
  await server.stop();

  const alignment = await alignWithGroup(dataDir, client, 64);
  t.equal(alignment.records_dropped, 2, 'the two records the group never committed are dropped');
  t.equal(alignment.dropped_after_seq, committedSeq, 'after the last committed seq');
  t.equal(alignment.snapshots_removed, 1, 'with the snapshot taken after them');
  t.same(listSnapshots(snapshotDirectoryIn(dataDir)).filter((entry) => entry.seq > committedSeq), [], 'no snapshot of the dropped history is left');

  server = await startTestServer({ dataDir });
  t.teardown(() => server.stop());
  t.equal(server.runtime.log.appendedSeq, committedSeq, 'the log ends at the committed seq');
  for (const id of dropped) t.equal((await server.request('GET', `/transactions/${id}`)).status, 404, `dropped ${id} is not found by id`);
  t.equal((await server.request('GET', '/transactions/reference/lost-4')).status, 404, 'nor by reference');
  for (const id of kept) t.equal((await server.request('GET', `/transactions/${id}`)).status, 200, `kept ${id} is found`);
  t.equal((await server.request('GET', '/balances/indicator/@rejoin/currency/USD')).body.balance, balanceAtCommit, 'the balance is as the group committed it');
  await settled(server);
  t.same(await filteredReferences(server), ['kept-1', 'kept-2', 'kept-3'], 'the index holds only what was committed');
  await transfer(server, 'lost-4', 401);
  t.pass('a dropped transfer\'s reference is free again');
});

t.test('writes a node acknowledged alone are never dropped: the join is refused naming their seqs', async (t) => {
  await freshSchema();
  const client = await open('alone');
  t.teardown(() => client.end());
  const dataDir = tempDataDir('repl-alone');
  let server = await startTestServer({ dataDir });
  await transfer(server, 'group-1', 100);
  const committedSeq = await committedByGroup(server, client);
  // Acknowledged by this node alone, after the group committed the rest.
  const alone = await transfer(server, 'alone-2', 200);
  const end = server.runtime.log.appendedSeq;
  await server.stop();
  const refusal = await alignWithGroup(dataDir, client, 64).then(() => undefined, (error: unknown) => error);
  t.type(refusal, AcknowledgedAloneError, 'the join is refused');
  t.match(refusal, { first_seq: committedSeq + 1, last_seq: end }, 'naming the seqs the group does not hold');
  t.match((refusal as Error).message, `seqs ${committedSeq + 1}-${end}`);
  t.match((refusal as Error).message, `folio replication leave --data ${dataDir}`, 'and the command that resolves it');
  server = await startTestServer({ dataDir });
  t.equal(server.runtime.log.appendedSeq, end, 'nothing was dropped');
  t.equal((await server.request('GET', `/transactions/${alone}`)).status, 200, 'the write acknowledged alone is there');

  // A leader's uncommitted records followed by writes of the node alone: the whole tail is refused.
  await server.runtime.log.sealAsLeader();
  const leaderSealedFrom = server.runtime.log.appendedSeq + 1;
  await transfer(server, 'leader-3', 300);
  await server.stop();
  server = await startTestServer({ dataDir });
  t.equal(server.runtime.log.leaderSealsFromSeq(), undefined, 'opening alone clears the leader\'s mark');
  await transfer(server, 'alone-4', 400);
  const tailEnd = server.runtime.log.appendedSeq;
  await server.stop();
  await t.rejects(alignWithGroup(dataDir, client, 64), { name: 'AcknowledgedAloneError', first_seq: committedSeq + 1, last_seq: tailEnd },
    `the tail from seq ${committedSeq + 1} (a leader's from ${leaderSealedFrom}, then the node's alone) is refused`);
  const reopened = await startTestServer({ dataDir });
  t.equal(reopened.runtime.log.appendedSeq, tailEnd, 'and nothing was dropped');
  await reopened.stop();
});

t.test('a log of another history is refused, and nothing is dropped', async (t) => {
  await freshSchema();
  const client = await open('other');
  t.teardown(() => client.end());
  const dataDir = tempDataDir('repl-other');
  const server = await startTestServer({ dataDir });
  for (let index = 0; index < 5; index += 1) await transfer(server, `other-${index}`, 10 + index);
  const end = server.runtime.log.appendedSeq;
  await server.stop();
  t.equal(await takeLease(client, 0, holder('z'), 60_000), 1);
  for (let seq = 1; seq <= 3; seq += 1) await appendRecord(client, { term: 1, first_seq: seq, last_seq: seq, previous_first_seq: seq - 1, bytes: bytes(seq) });
  await t.rejects(alignWithGroup(dataDir, client, 64), DivergedLogError, 'differing from the first record: refused');
  await t.rejects(alignWithGroup(dataDir, client, 2), DivergedLogError, 'more to drop than the limit: refused');
  const reopened = await startTestServer({ dataDir });
  t.equal(reopened.runtime.log.appendedSeq, end, 'the local log is untouched');
  await reopened.stop();
});
