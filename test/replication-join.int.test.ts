// Joining a group: an existing single-node ledger started with a replication URL uploads its log to the
// empty group and leads it; a new node joins from nothing and ends with the same state; a node holding a
// ledger of its own is refused (its log differs from the group's from the first record) and nothing of
// it is dropped; a leader stopped with SIGTERM gives its lease up and the standby takes over.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { startChildServer } from './helpers/child-server.js';
import { auditLedger, call, quietSeq, stateHashes, type Acknowledged } from './helpers/replication-client.js';

async function fillSingleNode(dataDir: string, references: string[], env: Record<string, string> = {}): Promise<Acknowledged[]> {
  const server = await startChildServer(dataDir, env);
  const acknowledged: Acknowledged[] = [];
  try {
    for (const reference of references) {
      const transfer = { description: 'test', source: '@world', destination: '@old', currency: 'USD', precise_amount: 250n, reference, allow_overdraft: true as const, skip_queue: true as const };
      const answer = await call(server.url, 'POST', '/transactions', transfer);
      if (answer.status !== 201) throw new Error(`single node: ${answer.status}`);
      acknowledged.push({ transfer, transaction_id: answer.body.transaction_id, seq: 0, status: 201, node_url: server.url, at_ms: 0 });
    }
  } finally {
    await server.terminate();
  }
  return acknowledged;
}

t.test('an existing ledger becomes a group; a ledger of another history is refused', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 3, label: 'repl-join', startAll: false });
  t.teardown(() => group.stop());
  const [a, b, c] = group.nodes as [GroupNode, GroupNode, GroupNode];
  const before = await fillSingleNode(a.dataDir, Array.from({ length: 40 }, (_, index) => `before-${index}`));
  // The existing ledger's hook sealing key becomes the group's (docs/operations.md).
  group.sealKey = fs.readFileSync(path.join(a.dataDir, 'secrets', 'hook-seal.key')).toString('hex');
  await group.startNode(a);
  t.equal(await group.waitForLeader(60_000), a, 'the node with the ledger leads the empty group');
  t.match(a.stderr, /uploaded this node's log to the empty group/, 'after uploading its log');
  await group.startNode(b);
  await group.waitForStandby(b, 60_000);
  const seq = await quietSeq(group, a);
  const hashes = await stateHashes(group, seq);
  t.equal(new Set(hashes.values()).size, 1, `a new node joins from nothing and reaches seq ${seq} with the same state hash`);
  t.same(await auditLedger(b.url as string, before), [], 'and holds every transfer made before');

  // A node with a ledger of its own is refused, and its ledger is left as it was.
  await fillSingleNode(c.dataDir, ['stranger-1', 'stranger-2'], { FOLIO_HOOK_SEAL_KEY: group.sealKey });
  await group.startNode(c);
  t.equal(await c.child!.exited, 78, 'a node whose log is of another history stops');
  t.match(c.stderr, /belongs to another history/, 'and says why');
  const untouched = await startChildServer(c.dataDir);
  t.equal((await call(untouched.url, 'GET', '/transactions/reference/stranger-2')).status, 200, 'nothing of its ledger was dropped');
  await untouched.terminate();

  // A leader stopped cleanly gives the lease up: the standby takes over.
  t.equal(await group.terminate(a), 0, 'the leader stops cleanly on SIGTERM');
  t.equal(await group.waitForLeader(30_000), b, 'the standby takes over');
  t.same(await auditLedger(b.url as string, before), [], 'with everything');
});
