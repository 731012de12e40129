// The console's node page on a replicated group of three real `folio serve` processes on one embedded
// PostgreSQL (bench/replication/replicated-group.ts), in a real headless Chromium: every node of the group
// is listed with its role, term, applied seq and lag exactly as GET /admin/replication?group=true has them
// (what `folio replication status` shows), each node's own role and leader as its /health says, and the
// log's seq follows a write on the leader live, through the change feed read as a stream. Opened on a
// standby too: it serves the console and its reads, and names its leader.
//
// Screenshots are written to test-screenshots/console/ (git-ignored), beside those of
// test/console-browser.int.test.ts.

import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { CHROMIUM, CHROMIUM_ARGS } from './helpers/chromium.js';
import { call } from './helpers/replication-client.js';
import { screenshotDir } from './helpers/screenshots.js';

declare const document: any;

const SCREENSHOT_DIR = screenshotDir('console');
const MASTER = 'console-group-master-key-0123456789abcdef';
const WAIT_MS = 60_000;
const headers = { 'X-svc-key': MASTER };

let group: ReplicatedGroup;
let browser: Browser;

t.before(async () => {
  group = await ReplicatedGroup.start({ nodes: 3, label: 'console-group', env: { FOLIO_SECRET_KEY: MASTER } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

t.teardown(async () => {
  await browser?.close();
  await group?.stop();
});

let references = 0;
async function write(leader: GroupNode): Promise<number> {
  references += 1;
  const answer = await call(leader.url as string, 'POST', '/transactions', {
    source: '@world', destination: '@console', precise_amount: 1000 + references, precision: 100, currency: 'USD', reference: `group-${references}`,
    description: 'console', allow_overdraft: true, skip_queue: true,
  }, headers);
  if (answer.status !== 201) throw new Error(`write: ${answer.status} ${JSON.stringify(answer.body)}`);
  return Number(answer.headers.get('x-folio-seq'));
}

/** Until every node has applied `seq` and the group's table says so. */
async function settled(leader: GroupNode, seq: number): Promise<any> {
  return group.waitFor(`every node at seq ${seq}`, WAIT_MS, async () => {
    const answer = await call(leader.url as string, 'GET', '/admin/replication?group=true', undefined, headers);
    const nodes = answer.body?.group?.nodes as any[] | undefined;
    if (!nodes || nodes.length !== 3 || !nodes.every((node) => node.applied_seq >= seq && !node.silent)) return undefined;
    for (const node of group.nodes) if (((await group.health(node))?.applied_seq ?? 0) < seq) return undefined;
    return answer.body;
  });
}

async function nodePage(node: GroupNode): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'Asia/Tokyo', viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
  });
  await page.goto(`${node.url}/console`);
  await page.locator('input[name=key]').fill(MASTER);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Ledgers' }).waitFor({ timeout: WAIT_MS });
  await page.goto(`${node.url}/console#/node`);
  await page.getByRole('heading', { level: 1, name: 'Node' }).waitFor({ timeout: WAIT_MS });
  await page.locator('.live.on').waitFor({ timeout: WAIT_MS });
  return { page, problems };
}

/** The group's table as the page shows it: [name, role, term, applied seq, behind] per node. */
async function shownGroup(page: Page): Promise<string[][]> {
  const rows = page.locator('section[aria-labelledby="section-replication-group"] tbody tr');
  await rows.first().waitFor({ timeout: WAIT_MS });
  const table: string[][] = [];
  for (let index = 0; index < await rows.count(); index += 1) {
    const cells = await rows.nth(index).locator('td').allTextContents();
    table.push(cells.slice(0, 5));
  }
  return table;
}

t.test('the node page of a group of three: every node as the group has it, live from the change feed', async (t) => {
  const leader = await group.waitForLeader(WAIT_MS);
  const standbys = group.nodes.filter((node) => node !== leader);
  for (const node of standbys) await group.waitForStandby(node, WAIT_MS);
  let seq = 0;
  for (let index = 0; index < 12; index += 1) seq = await write(leader);
  const expected = await settled(leader, seq);

  const { page, problems } = await nodePage(leader);
  t.teardown(() => page.context().close());
  // The page reads the group once a second at most while changes come in; nothing is written now, so it settles.
  await page.waitForFunction((want) => [...document.querySelectorAll('section[aria-labelledby="section-replication-group"] tbody tr')]
    .filter((row: any) => Number(row.querySelectorAll('td')[3]?.textContent) >= want).length === 3, seq, { timeout: WAIT_MS });
  const shown = await shownGroup(page);
  const answer = (await call(leader.url as string, 'GET', '/admin/replication?group=true', undefined, headers)).body;
  const byName = new Map((answer.group.nodes as any[]).map((node) => [node.name, node]));
  t.same(shown.map((row) => row[0]).sort(), group.nodes.map((node) => node.name).sort(), 'every node of the group is listed');
  for (const [name, role, term, applied, behind] of shown) {
    const node = byName.get(name);
    t.equal(role, node.role, `${name}: ${role}, as the group has it`);
    t.equal(term, String(node.term), `${name}: term ${term}`);
    t.equal(applied, String(node.applied_seq), `${name}: applied seq ${applied}`);
    t.equal(behind, String(node.behind_events), `${name}: ${behind} events behind`);
  }
  t.same(shown.map((row) => row[1]).sort(), ['leader', 'standby', 'standby'], 'one leader, two standbys');
  t.equal(expected.group.lease.holder.startsWith(leader.name), true, 'the lease is the leader\'s');
  t.equal(await page.locator('[data-role]').textContent(), 'leader', 'this node says it leads (its /health)');
  t.match(await page.locator('section[aria-labelledby="section-replication-group"]').textContent(), new RegExp(`log ends at seq ${answer.group.log_end_seq}`));
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'node-replicated-leader.png'), fullPage: true });

  // A write on the leader: the log's seq on the page moves to it through the change feed.
  const next = await write(leader);
  await page.waitForFunction((want) => Number(document.querySelector('.seq')?.getAttribute('data-seq')) >= want, next, { timeout: WAIT_MS });
  t.pass(`the log seq followed the write to ${next}, live`);
  await page.waitForFunction((want) => [...document.querySelectorAll('section[aria-labelledby="section-replication-group"] tbody tr')]
    .some((row: any) => row.querySelectorAll('td')[1]?.textContent === 'leader' && Number(row.querySelectorAll('td')[3]?.textContent) >= want), next, { timeout: WAIT_MS });
  t.pass('and the group\'s table was read again');
  t.same(problems, [], 'no script error or policy violation');

  // On a standby: the console is served there too, and names the leader.
  const standby = standbys[0] as GroupNode;
  const other = await nodePage(standby);
  t.teardown(() => other.page.context().close());
  t.equal(await other.page.locator('[data-role]').textContent(), 'standby', 'the standby says it is one');
  t.match(await other.page.locator('section[aria-labelledby="section-health"]').textContent(), new RegExp(`Leader${leader.name}`), 'and names its leader');
  await other.page.waitForFunction((want) => Number(document.querySelector('.seq')?.getAttribute('data-seq')) >= want, next, { timeout: WAIT_MS });
  t.equal((await shownGroup(other.page)).length, 3, 'it lists the whole group too');
  await other.page.screenshot({ path: path.join(SCREENSHOT_DIR, 'node-replicated-standby.png'), fullPage: true });
  t.same(other.problems, [], 'no script error or policy violation on the standby');
});
