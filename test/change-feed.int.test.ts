// The change feed (GET /events) on a replicated group of real nodes: a consumer follows it as
// Server-Sent Events from a standby while transfers go to the leader, loses its connection, resumes on
// the other node with Last-Event-ID, loses it again and finishes with JSON pages from its cursor. It
// receives every committed change exactly once, in seq order, from 1 to the end, and every acknowledged
// transfer once. Bad cursors are refused; streams are bounded per node.

import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { call, GroupWriter, quietSeq, type Transfer } from './helpers/replication-client.js';

interface Received {
  seq: number;
  type: string;
  change: any;
}

/**
 * Reads the SSE stream of `url` from `after`, handing each change to `onChange` until it returns false
 * (then the connection is dropped, as a client losing it would); resolves with the last id received.
 */
async function followStream(url: string, lastEventId: string | undefined, onChange: (received: Received) => boolean): Promise<void> {
  const controller = new AbortController();
  const response = await fetch(`${url}/events`, {
    headers: { Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
    signal: controller.signal,
  });
  if (response.status !== 200) throw new Error(`stream answered ${response.status}: ${await response.text()}`);
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) throw new Error(`stream type ${response.headers.get('content-type')}`);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
        const message = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const fields = new Map<string, string>();
        for (const line of message.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ''));
        }
        if (!fields.has('data')) continue;
        const change = JSON.parse(fields.get('data') as string);
        if (!onChange({ seq: Number(fields.get('id')), type: fields.get('event') as string, change })) return;
      }
    }
  } finally {
    controller.abort();
  }
}

t.test('the change feed delivers every committed change exactly once across reconnects and nodes', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'repl-feed' });
  t.teardown(() => group.stop());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  await group.waitForStandby(b, 60_000);
  const writer = new GroupWriter(group);
  const total = 240;
  let written = 0;
  const load = (async () => {
    for (; written < total; written += 1) {
      const transfer: Transfer = {
        description: 'test', source: '@world', destination: `@feed${written % 4}`, currency: 'USD', precise_amount: BigInt(1 + written),
        reference: `feed-${written}`, allow_overdraft: true, skip_queue: true,
      };
      await writer.transfer(transfer);
    }
  })();

  const received: Received[] = [];
  // From a standby, from the start, until a hundred changes have come; then the connection is lost.
  await followStream(b.url as string, undefined, (change) => {
    received.push(change);
    return received.length < 100;
  });
  // Resumed on the leader with the last id received.
  const resumeAt = received.at(-1)!.seq;
  await followStream(a.url as string, String(resumeAt), (change) => {
    received.push(change);
    return received.length < 180;
  });
  await load;
  const end = await quietSeq(group, a);
  // The rest as JSON pages from the standby, from the cursor.
  let cursor = String(received.at(-1)!.seq);
  for (let pages = 0; pages < 1_000; pages += 1) {
    const page = await call(b.url as string, 'GET', `/events?after=${cursor}&limit=37`);
    t.equal(page.status, 200);
    for (const change of page.body.events) received.push({ seq: change.seq, type: change.type, change });
    cursor = page.body.next;
    if (!page.body.has_more && Number(cursor) >= end) break;
  }

  const seqs = received.map((change) => change.seq);
  t.same(seqs, Array.from({ length: end }, (_, index) => index + 1), `every change from 1 to ${end}, once each, in order, across two reconnects and both nodes`);
  const references = received.flatMap((change) => (change.change.transactions ?? []).map((transaction: any) => transaction.reference));
  const acknowledged = writer.acknowledged.map((ack) => ack.transfer.reference);
  t.same(acknowledged.filter((reference) => references.filter((seen) => seen === reference).length !== 1), [], `each of the ${acknowledged.length} acknowledged transfers appears once`);
  const applied = received.find((change) => change.type === 'transaction.applied');
  t.ok(applied?.change.postings?.length >= 2, 'a change carries its postings');
  t.match(applied?.change.postings[0], { balance_id: String, field: String, precise_amount: Number }, 'with exact amounts');

  t.equal((await call(a.url as string, 'GET', '/events?after=12x')).body.error_detail.code, 'FEED_CURSOR_INVALID', 'a cursor that is not a seq is refused');
  t.equal((await call(a.url as string, 'GET', '/events?limit=100000')).status, 400, 'a page size past the limit is refused');
  const beyond = await call(a.url as string, 'GET', `/events?after=${end + 1000}`);
  t.same([beyond.status, beyond.body.events, beyond.body.has_more], [200, [], false], 'a cursor past the end gives an empty page');
});

t.test('change streams are bounded per node', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 1, label: 'repl-feed-bound' });
  t.teardown(() => group.stop());
  const url = group.nodes[0]!.url as string;
  const controllers: AbortController[] = [];
  t.teardown(() => controllers.forEach((controller) => controller.abort()));
  for (let index = 0; index < 32; index += 1) {
    const controller = new AbortController();
    controllers.push(controller);
    const response = await fetch(`${url}/events`, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
    t.equal(response.status, 200, `stream ${index + 1}`);
  }
  const refused = await call(url, 'GET', '/events', undefined, { Accept: 'text/event-stream' });
  t.equal(refused.status, 503, 'one stream too many is answered 503');
  t.equal(refused.body.error_detail.code, 'FEED_STREAMS_EXCEEDED');
  controllers.forEach((controller) => controller.abort());
  await group.waitFor('a stream slot free again', 10_000, async () => {
    const controller = new AbortController();
    const response = await fetch(`${url}/events`, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
    controller.abort();
    return response.status === 200 ? true : undefined;
  });
  t.pass('closed streams free their slots');
});
