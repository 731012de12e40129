// The core's side of a cutover (http/routes/cutover-routes.ts, cutover/cutover-control.ts,
// cutover/log-follower.ts), on real processes: a fenced leader refuses writes with 503 CUTOVER_FENCED and
// Retry-After, appends nothing more (its queue work waits too), and takes writes again once unfenced;
// a follower started on a backup copies the leader's log byte for byte (same checksum, same state hash
// at the same seq), refuses writes, is promoted only at exactly the leader's position, and then works
// as a leader, queued work included. The routes need the master key.

import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/bin/folio.js');
const KEY = 'cutover-test-master-key-0123456789abcdef';
const auth = { 'x-svc-key': KEY };

function transfer(reference: string, skipQueue = true): Record<string, unknown> {
  return { description: 'test', source: '@world', destination: '@dest', precise_amount: 10, currency: 'USD', allow_overdraft: true, skip_queue: skipQueue, reference };
}

function cli(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }));
  });
}

t.test('fence, follow, verify, promote', async (t) => {
  const leaderDir = tempDataDir('folio-leader');
  const followerDir = path.join(tempDataDir('folio-follower'), 'data');
  const leader = await startChildServer(leaderDir, { FOLIO_SECRET_KEY: KEY });
  let follower: ChildServer | undefined;
  t.teardown(async () => {
    await leader.terminate();
    await follower?.terminate();
  });
  for (let index = 0; index < 20; index += 1) t.equal((await sendRequest(leader.url, 'POST', '/transactions', transfer(`before-${index}`), auth)).status, 201);
  t.equal((await sendRequest(leader.url, 'POST', '/admin/cutover/fence')).status, 401, 'the routes need the master key');
  t.equal((await cli(['backup', '--data', leaderDir, '--out', followerDir])).code, 0, 'folio backup copies the running leader');
  for (let index = 0; index < 20; index += 1) t.equal((await sendRequest(leader.url, 'POST', '/transactions', transfer(`between-${index}`), auth)).status, 201);

  follower = await startChildServer(followerDir, { FOLIO_SECRET_KEY: KEY, FOLIO_FOLLOW_DATA_DIR: leaderDir });
  const refused = await sendRequest(follower.url, 'POST', '/transactions', transfer('on-follower'), auth);
  t.equal(refused.status, 503, 'a follower takes no writes');
  t.equal(refused.body.error_detail.code, 'CUTOVER_FENCED');
  t.equal((await sendRequest(follower.url, 'POST', '/admin/cutover/fence', undefined, auth)).status, 409, 'a follower cannot be fenced');

  // Queued work must wait for the fence too: queue some right before it.
  for (let index = 0; index < 10; index += 1) t.equal((await sendRequest(leader.url, 'POST', '/transactions', transfer(`queued-${index}`, false), auth)).status, 201);
  const fenced = await sendRequest(leader.url, 'POST', '/admin/cutover/fence', undefined, auth);
  t.equal(fenced.status, 200);
  const position = { seq: fenced.body.seq, log_checksum: fenced.body.log_checksum };
  t.match(position.log_checksum, /^[0-9a-f]{64}$/);
  const write = await sendRequest(leader.url, 'POST', '/transactions', transfer('while-fenced'), auth);
  t.equal(write.status, 503, 'a fenced leader refuses writes');
  t.equal(write.body.error_detail.code, 'CUTOVER_FENCED');
  t.equal(write.headers['retry-after'], '1');
  t.equal((await sendRequest(leader.url, 'GET', '/transactions/reference/before-1', undefined, auth)).status, 200, 'reads still work');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const still = await sendRequest(leader.url, 'GET', `/admin/cutover/status?at_seq=${position.seq}`, undefined, auth);
  t.equal(still.body.appended_seq, position.seq, 'nothing was appended after the fence (queued work waits)');

  const [leaderState, followerState] = await Promise.all([
    sendRequest(leader.url, 'GET', `/admin/cutover/status?at_seq=${position.seq}&state_hash=true`, undefined, auth),
    sendRequest(follower.url, 'GET', `/admin/cutover/status?at_seq=${position.seq}&state_hash=true`, undefined, auth),
  ]);
  t.equal(followerState.body.role, 'follower');
  t.equal(followerState.body.log_checksum, position.log_checksum, 'the follower has the same log checksum at the seq');
  t.equal(followerState.body.state_hash, leaderState.body.state_hash, 'and the same state hash');
  t.equal((await sendRequest(follower.url, 'GET', `/admin/cutover/status?at_seq=${position.seq + 5}&wait_ms=200`, undefined, auth)).status, 409, 'a seq the leader never reaches');

  const wrong = await sendRequest(follower.url, 'POST', '/admin/cutover/promote', { seq: position.seq, log_checksum: '0'.repeat(64) }, auth);
  t.equal(wrong.status, 409, 'promotion at another position is refused');
  t.equal((await sendRequest(follower.url, 'POST', '/admin/cutover/promote', { ...position, extra: 1 }, auth)).status, 400);
  const promoted = await sendRequest(follower.url, 'POST', '/admin/cutover/promote', position, auth);
  t.equal(promoted.status, 200);
  t.match(promoted.body, { role: 'leader', fenced: false, seq: position.seq });
  t.equal((await sendRequest(follower.url, 'POST', '/transactions', transfer('on-new-leader'), auth)).status, 201, 'the promoted follower takes writes');
  let applied = 0;
  for (let attempt = 0; attempt < 100 && applied < 10; attempt += 1) {
    applied = 0;
    for (let index = 0; index < 10; index += 1) {
      if ((await sendRequest(follower.url, 'GET', `/transactions/reference/queued-${index}`, undefined, auth)).body?.status === 'APPLIED') applied += 1;
    }
    if (applied < 10) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.equal(applied, 10, 'the queued work the leader had not done is done by the new leader');
  const balance = await sendRequest(follower.url, 'GET', '/balances/indicator/@dest/currency/USD', undefined, auth);
  t.equal(balance.body.balance, 510, 'every write is there once (51 of 10)');

  const unfenced = await sendRequest(leader.url, 'POST', '/admin/cutover/unfence', undefined, auth);
  t.equal(unfenced.status, 200, 'an abandoned cutover unfences the old leader');
  t.equal((await sendRequest(leader.url, 'POST', '/transactions', transfer('after-unfence'), auth)).status, 201);
  await follower.terminate();
  follower = undefined;
  const verified = await cli(['verify', '--data', followerDir]);
  t.equal(verified.code, 0, 'folio verify passes on the follower\'s directory');
});
