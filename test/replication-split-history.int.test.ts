// A group member started without its group (a lost FOLIO_REPLICATION_URL on a restart) must not make a
// history of its own that rejoining then throws away (issue 37, finding 2):
//   - a member's data directory started without the URL is refused before it serves anything, naming the
//     directory, why, and `folio replication leave`;
//   - with its membership removed by hand (as a version without that refusal would start it), it serves
//     alone and acknowledges a write; started again with the URL it is refused rather than aligned: nothing
//     is dropped, and the refusal names the seqs and the command, while the group wrote its own event at
//     that seq;
//   - `folio replication leave` makes the directory an independent ledger holding that write, which the
//     group goes on refusing, and a node started with an empty data directory rejoins the group (the
//     documented way back: docs/operations.md).
// A leader's records the group never committed are still dropped on rejoining:
// test/replication-partition.int.test.ts and test/replication-store.int.test.ts.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { LISTENING_LINE, spawnChild } from '../bench/resources.js';
import { startChildServer } from './helpers/child-server.js';
import { call, quietSeq, stateHashes } from './helpers/replication-client.js';

const CLI = fileURLToPath(new URL('../dist/bin/folio.js', import.meta.url));
/** How long a refused start may take to exit (it exits before it listens; the bound is for a busy machine). */
const REFUSAL_MS_MAX = 60_000;

/** `folio serve` on `dataDir` without a replication URL: how it ended, or that it listened (then it is stopped). */
async function serveAlone(dataDir: string): Promise<{ listened: boolean; code: number | string | undefined; stdout: string; stderr: string }> {
  const child = spawnChild(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, FOLIO_PORT: '0', FOLIO_HOST: '127.0.0.1', FOLIO_DATA_DIR: dataDir, FOLIO_LOG_LEVEL: 'warn', FOLIO_REPLICATION_URL: '' },
  });
  const listened = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), REFUSAL_MS_MAX);
    const check = (): void => {
      if (!LISTENING_LINE.test(child.stdout())) return;
      clearTimeout(timer);
      resolve(true);
    };
    child.process.stdout?.on('data', check);
    void child.exited.then(() => {
      clearTimeout(timer);
      resolve(LISTENING_LINE.test(child.stdout()));
    });
  });
  const code = listened ? await child.stop() : await Promise.race([child.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1_000))]);
  return { listened, code, stdout: child.stdout(), stderr: child.stderr() };
}

/** The exit code of a group node that is expected to stop, or 'running' if it has not within the bound. */
async function exitOf(group: ReplicatedGroup, node: GroupNode): Promise<number | string> {
  const exited = await Promise.race([node.child!.exited, new Promise<string>((resolve) => setTimeout(() => resolve('running'), REFUSAL_MS_MAX))]);
  if (exited === 'running') await group.kill(node);
  return exited;
}

async function createLedger(url: string, name: string): Promise<{ ledger_id: string; seq: number }> {
  const answer = await call(url, 'POST', '/ledgers', { name });
  if (answer.status !== 201) throw new Error(`POST /ledgers on ${url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { ledger_id: answer.body.ledger_id, seq: Number(answer.headers.get('x-folio-seq')) };
}

t.test('a member started without its group: refused; made to serve alone, its write is never dropped; leave and rejoin resolve it', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'repl-split' });
  t.teardown(() => group.stop());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  t.equal(await group.waitForLeader(60_000), a, 'the first node leads');
  await group.waitForStandby(b, 60_000);
  await createLedger(a.url as string, 'before');
  const before = await quietSeq(group, a);
  await group.waitFor('the standby to apply the write', 30_000, async () => ((await group.health(b))?.applied_seq ?? 0) >= before ? true : undefined);
  t.equal(await group.terminate(b), 0, 'the standby stops cleanly');

  // Started without its group's URL: refused before it serves anything.
  const refused = await serveAlone(b.dataDir);
  t.notOk(refused.listened, 'a member started without its group does not serve');
  t.not(refused.code, 0, `it exits with a nonzero code (${refused.code})`);
  t.match(refused.stderr, b.dataDir, 'the refusal names the directory');
  t.match(refused.stderr, /belongs to a replicated group/, 'says why');
  t.match(refused.stderr, `folio replication leave --data ${b.dataDir}`, 'and names the command');

  // Its membership removed by hand (a version without the refusal starts it so): it serves alone and acknowledges.
  fs.rmSync(path.join(b.dataDir, 'node-id'));
  const alone = await startChildServer(b.dataDir, { FOLIO_REPLICATION_URL: '' });
  const written = await createLedger(alone.url, 'acknowledged alone');
  t.equal(written.seq, before + 1, `the lone node acknowledged a ledger at seq ${written.seq}`);
  t.equal(await alone.terminate(), 0);
  // Meanwhile the group writes its own event at that seq.
  const groupWrite = await createLedger(a.url as string, 'the group\'s own');
  t.equal(groupWrite.seq, written.seq, 'the group wrote its own event at the same seq');

  // Started with its group again: refused, nothing dropped, the seqs and the command named.
  await group.startNode(b);
  t.equal(await exitOf(group, b), 78, 'the node is refused when it rejoins');
  t.match(b.stderr, `seqs ${written.seq}-${written.seq}`, 'the refusal names the seqs it acknowledged alone');
  t.match(b.stderr, `folio replication leave --data ${b.dataDir}`, 'and the command');
  t.notMatch(b.stderr, /"records_dropped":[1-9]/, 'nothing was dropped');

  // The command: the directory leaves the group and serves alone with its write.
  const leave = spawnSync(process.execPath, [CLI, 'replication', 'leave', '--data', b.dataDir], { encoding: 'utf8', timeout: 60_000 });
  t.equal(leave.status, 0, `folio replication leave exits 0 (${leave.stderr})`);
  t.match(leave.stdout, `to seq ${written.seq}`, 'its log kept whole');
  const left = await startChildServer(b.dataDir, { FOLIO_REPLICATION_URL: '' });
  t.equal((await call(left.url, 'GET', `/ledgers/${written.ledger_id}`)).status, 200, 'the write acknowledged alone is still there');
  t.equal(await left.terminate(), 0);
  await group.startNode(b);
  t.equal(await exitOf(group, b), 78, 'the group goes on refusing the directory that left it');

  // The way back into the group: a node with an empty data directory.
  fs.renameSync(b.dataDir, `${b.dataDir}.left`);
  await group.startNode(b);
  await group.waitForStandby(b, 60_000);
  const seq = await quietSeq(group, a);
  const hashes = await stateHashes(group, seq);
  t.equal(new Set(hashes.values()).size, 1, `the node rejoins with an empty directory and reaches seq ${seq} with the group's state`);
  t.equal((await call(b.url as string, 'GET', `/ledgers/${groupWrite.ledger_id}`)).status, 200, 'holding the group\'s event at that seq');
  t.equal((await call(b.url as string, 'GET', `/ledgers/${written.ledger_id}`)).status, 404, 'and not the lone write, which the directory that left keeps');
});
