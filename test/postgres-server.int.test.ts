// The throwaway PostgreSQL server benches and tests start (bench/postgres/postgres-server.ts): it is
// ready when startPostgres resolves, listens on loopback, runs as an unprivileged user when started as
// root, and from a copy of the binaries that user can reach, so a checkout in a directory only root may
// enter (a `mktemp -d` folder, /root/folio) works too (initdb failed there with EACCES). A directory a
// stranger put where the copy goes is refused rather than run.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import t from 'tap';
import { copyDirectoryFor, installedDistribution } from '../bench/postgres/postgres-distribution.js';
import { startPostgres } from '../bench/postgres/postgres-server.js';

const SMALL = { max_connections: '20', shared_buffers: '16MB' };
const asRoot = process.getuid?.() === 0;

async function query(url: string, text: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows[0] as Record<string, unknown>;
  } finally {
    await client.end();
  }
}

/** The uid a process runs as, from /proc. */
function uidOf(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((text) => text.startsWith('Uid:')) ?? '';
  return Number(line.split(/\s+/)[1]);
}

/** The distribution `npm ci` installed, copied into a new directory only root may enter (as a root-only checkout holds it). */
async function rootOnlyDistribution(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const closed = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-root-only-'));
  t.teardown(() => fs.rmSync(closed, { recursive: true, force: true }));
  fs.chmodSync(closed, 0o700);
  const installed = await installedDistribution();
  const dir = path.join(closed, 'checkout', 'node_modules', 'native');
  for (const part of ['bin', 'lib', 'share']) fs.cpSync(path.join(installed.dir, part), path.join(dir, part), { recursive: true, verbatimSymlinks: true });
  return dir;
}

t.test('a server ready on loopback, reached by its url, gone after stop', async (t) => {
  const server = await startPostgres({ label: 'server-test', settings: SMALL });
  t.match(server.url, /^postgres:\/\/folio:[\w-]+@127\.0\.0\.1:\d+\/postgres$/);
  t.same(await query(server.url, 'SELECT current_user AS user, 1 + 1 AS two'), { user: 'folio', two: 2 });
  t.equal((await query(server.url, 'SHOW fsync')).fsync, 'on', 'durability settings are not the caller\'s to change');
  t.equal((await query(server.url, 'SHOW max_connections')).max_connections, '20', 'other settings are');
  const executable = fs.readlinkSync(`/proc/${server.pid}/exe`);
  if (asRoot) {
    t.not(uidOf(server.pid), 0, 'not as root');
    t.ok(executable.startsWith(path.join(os.tmpdir(), 'folio-postgres-0-')), `run from the copy under the temp dir (${executable})`);
    const copy = path.dirname(path.dirname(executable));
    const stat = fs.lstatSync(copy);
    t.ok(stat.isDirectory() && stat.uid === 0 && (stat.mode & 0o777) === 0o755, 'the copy is root\'s, readable by all, writable by root only');
  } else {
    t.equal(uidOf(server.pid), process.getuid?.(), 'as this user, from the checkout');
  }
  await server.stop();
  t.throws(() => process.kill(server.pid, 0), 'the server is gone');
});

t.test('binaries in a directory only root may enter', { skip: asRoot ? false : 'only root starts PostgreSQL as another user' }, async (t) => {
  const dir = await rootOnlyDistribution(t);
  const postgresUser = spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : 'nobody';
  const id = (flag: string): number => Number(spawnSync('id', [flag, postgresUser], { encoding: 'utf8' }).stdout.trim());
  const reach = spawnSync('test', ['-x', path.join(dir, 'bin', 'initdb')], { uid: id('-u'), gid: id('-g') });
  t.not(reach.status, 0, `${postgresUser} cannot reach the binaries where they are`);
  const server = await startPostgres({ label: 'root-only', settings: SMALL, distributionDir: dir });
  t.teardown(() => server.stop());
  t.same(await query(server.url, 'SELECT 1 AS one'), { one: 1 }, 'and the server runs all the same');
  t.ok(fs.readlinkSync(`/proc/${server.pid}/exe`).startsWith(copyDirectoryFor(dir)), 'from its copy');
});

t.test('a directory someone else put where the copy goes is refused, not run', { skip: asRoot ? false : 'needs root to plant another user\'s directory' }, async (t) => {
  const dir = await rootOnlyDistribution(t);
  fs.writeFileSync(path.join(dir, 'share', 'planted-test-marker'), 'a distribution no other test copies\n');
  const target = copyDirectoryFor(dir);
  t.teardown(() => fs.rmSync(target, { recursive: true, force: true }));
  fs.mkdirSync(path.join(target, 'bin'), { recursive: true });
  fs.chownSync(target, 65534, 65534);
  await t.rejects(startPostgres({ label: 'planted', settings: SMALL, distributionDir: dir }), /not a PostgreSQL copy of this user's/, 'owned by another user');
  fs.rmSync(target, { recursive: true });
  fs.symlinkSync(dir, target);
  await t.rejects(startPostgres({ label: 'planted', settings: SMALL, distributionDir: dir }), /not a PostgreSQL copy of this user's/, 'a symlink');
  fs.rmSync(target);
  const server = await startPostgres({ label: 'planted', settings: SMALL, distributionDir: dir });
  t.teardown(() => server.stop());
  t.same(await query(server.url, 'SELECT 1 AS one'), { one: 1 }, 'once it is gone, the copy is made and runs');
});
