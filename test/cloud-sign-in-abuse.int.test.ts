// The sign-in page against an attacker, on a real control plane: password guessing is throttled per
// account and per client address across fresh pages (429 with Retry-After, the right password refused
// too until the backoff passes, and not for ever), password checks beyond the gate get 503 with
// Retry-After instead of a turn of scrypt, and a flood of GET /oauth/authorize cannot push out the page
// a real user has open (pages are sealed in the form and the cookie; the server keeps none of them).
// Requests come from several loopback addresses (all of 127.0.0.0/8 reaches the rig) to be told apart.

import t from 'tap';
import { createClient, createUser, openSignIn, removeDir, startCloudRig, submitSignIn, type CloudRig } from './helpers/cloud-rig.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

let rig: CloudRig;
let params: Record<string, string>;

t.before(async () => {
  rig = await startCloudRig();
  const client = await createClient(rig, ['*'], [REDIRECT]);
  params = { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state: 'st' };
});

t.teardown(async () => {
  await rig.stop();
  removeDir(rig.dataDir);
});

async function signIn(email: string, password: string, localAddress: string): Promise<Response> {
  const page = await openSignIn(rig, params);
  if (page.status !== 200) throw new Error(`sign-in page: ${page.status}`);
  return submitSignIn(rig, page, { email, password }, { localAddress });
}

t.test('20 wrong passwords for one account from fresh pages are throttled; the right one waits for the backoff, not for ever', async (t) => {
  const victim = await createUser(rig, 'victim@example.com', 'the victim password');
  const statuses: number[] = [];
  for (let attempt = 1; attempt <= 20; attempt += 1) {
    const answer = await signIn(victim.email, `guess number ${attempt}`, '127.0.0.2');
    statuses.push(answer.status);
    if (answer.status === 429) {
      t.ok(Number(answer.headers.get('retry-after')) >= 1, 'a refusal says when to try again');
      t.match(await answer.text(), /Too many failed sign-ins/, 'on the page');
    }
  }
  t.comment(`statuses: ${statuses.join(' ')}`);
  t.same(statuses.slice(0, 5), [401, 401, 401, 401, 401], 'the first five are checked');
  t.ok(statuses.every((status) => status === 401 || status === 429), 'nothing else');
  t.ok(statuses.filter((status) => status === 429).length >= 10, 'most are refused without a check');

  const right = await signIn(victim.email, victim.password, '127.0.0.3');
  t.equal(right.status, 429, 'the right password from another address and a fresh page is refused while the backoff runs');
  const waitSeconds = Number(right.headers.get('retry-after'));
  t.ok(waitSeconds >= 1 && waitSeconds <= 15 * 60, `Retry-After ${waitSeconds} s, at most the 15-minute cap`);

  rig.clockOffsetMs += waitSeconds * 1000;
  const later = await signIn(victim.email, victim.password, '127.0.0.3');
  t.equal(later.status, 303, 'once Retry-After has passed the right password works: the account is not locked out');
  t.match(new URL(later.headers.get('location')!).searchParams.get('code'), /^fac_/);
  t.equal((await signIn(victim.email, 'one more wrong guess', '127.0.0.3')).status, 401, 'and a success cleared the account\'s count');
});

t.test('one address guessing many accounts is throttled; other addresses are not', async (t) => {
  // Made first: creating a user hashes a password, which on a loaded machine can outlast the wait.
  const bystander = await createUser(rig, 'bystander@example.com', 'the bystander password');
  const statuses: number[] = [];
  for (let account = 1; account <= 26; account += 1) {
    statuses.push((await signIn(`made-up-${account}@example.com`, 'a guessed password', '127.0.0.4')).status);
  }
  t.comment(`statuses: ${statuses.join(' ')}`);
  t.ok(statuses.slice(0, 20).every((status) => status === 401), 'twenty failures from one address are checked');
  // Each failure past twenty starts a wait doubling from 1 s; on a loaded machine a request can take
  // longer than the first waits, so a few may still be checked (and double the wait) before refusals.
  t.ok(statuses.slice(20).every((status) => status === 401 || status === 429), 'nothing else');
  t.ok(statuses.slice(20).filter((status) => status === 429).length >= 2, 'then the address is refused');
  t.equal((await signIn(bystander.email, bystander.password, '127.0.0.4')).status, 429, 'even a right password from that address waits');
  t.equal((await signIn(bystander.email, bystander.password, '127.0.0.5')).status, 303, 'another address signs in');
});

t.test('password checks beyond the gate get 503 with Retry-After, not a turn of scrypt', async (t) => {
  const pages = await Promise.all(Array.from({ length: 40 }, () => openSignIn(rig, params)));
  const answers = await Promise.all(pages.map((page, index) => submitSignIn(rig, page, { email: `burst-${index}@example.com`, password: 'a guessed password' }, { localAddress: `127.0.1.${index + 1}` })));
  const statuses = answers.map((answer) => answer.status);
  t.comment(`statuses: ${statuses.join(' ')}`);
  const busy = answers.filter((answer) => answer.status === 503);
  t.ok(busy.length > 0, `${busy.length} of 40 at once were turned away`);
  t.ok(busy.length <= 40 - 18, 'no more than the 2 running and 16 waiting got a turn... at least those did');
  t.ok(busy.every((answer) => answer.headers.get('retry-after') === '1'), 'each with Retry-After');
  t.ok(statuses.every((status) => status === 401 || status === 503), 'the rest were checked and refused');
  const user = await createUser(rig, 'after-burst@example.com', 'after the burst');
  t.equal((await signIn(user.email, user.password, '127.0.2.1')).status, 303, 'afterwards every turn is free again');
});

t.test('a flood of sign-in pages does not push out the page a user has open', async (t) => {
  const user = await createUser(rig, 'patient@example.com', 'the patient password');
  const page = await openSignIn(rig, params);
  t.equal(page.status, 200);
  const flood = 10_500; // more than the 10,000 pages the server used to keep
  let opened = 0;
  const worker = async (): Promise<void> => {
    while (opened < flood) {
      opened += 1;
      const response = await fetch(`${rig.url}/oauth/authorize?${new URLSearchParams(params)}`);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`flood page: ${response.status}`);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: 32 }, worker));
  t.comment(`${flood} pages opened in ${Date.now() - started} ms`);
  const answer = await submitSignIn(rig, page, { email: user.email, password: user.password }, { localAddress: '127.0.3.1' });
  t.equal(answer.status, 303, 'the user\'s page still works after the flood');
  t.match(new URL(answer.headers.get('location')!).searchParams.get('code'), /^fac_/);
});

t.test('the largest sign-in page still fits its form: the longest redirect_uri and state, and a long password', async (t) => {
  const longRedirect = `http://127.0.0.1:9/${'r'.repeat(2048 - 'http://127.0.0.1:9/'.length)}`;
  const client = await createClient(rig, ['*'], [longRedirect]);
  const page = await openSignIn(rig, { response_type: 'code', client_id: client.client_id, redirect_uri: longRedirect, state: '\u0001'.repeat(1024) });
  t.equal(page.status, 200);
  t.comment(`sealed request: ${page.sealed!.length} characters`);
  const answer = await submitSignIn(rig, page, { email: 'long-form@example.com', password: 'é'.repeat(1024) }, { localAddress: '127.0.4.1' });
  t.equal(answer.status, 401, 'read and checked (not refused as too large)');
});
