// `folio cloud` as an operator runs it (the built CLI in a child process): it prints its address, and
// the cloud API key once when it generates one. Stopping it with SIGTERM stops every core process it
// started and leaves no listening port behind; killing it outright (SIGKILL, no chance to clean up)
// still leaves no core running, because each core stops when the pipe from its parent ends.

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { sendRequest } from './helpers/test-server.js';
import { waitUntil } from './helpers/cloud-rig.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/bin/folio.js');

interface CloudChild {
  process: ChildProcess;
  url: string;
  stdout(): string;
  exited: Promise<number | string>;
}

async function startCloudChild(dataDir: string, env: Record<string, string> = {}): Promise<CloudChild> {
  const child = spawn(process.execPath, [CLI, 'cloud'], {
    env: { ...process.env, FOLIO_CLOUD_PORT: '0', FOLIO_CLOUD_DATA_DIR: dataDir, FOLIO_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  await waitUntil(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(stdout), 30_000, `the cloud to listen (stderr: ${stderr})`);
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!;
  return { process: child, url, stdout: () => stdout, exited };
}

/** Pids whose parent is `parentPid` (from /proc). */
function childrenOf(parentPid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === parentPid) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function twoDeployments(cloud: CloudChild, key: string): Promise<string[]> {
  const ids: string[] = [];
  for (const name of ['one', 'two']) {
    const created = await sendRequest(cloud.url, 'POST', '/deployments', { name }, { 'x-svc-key': key });
    ids.push(created.body.deployment_id);
  }
  await waitUntil(async () => {
    const listed = await sendRequest(cloud.url, 'GET', '/deployments', undefined, { 'x-svc-key': key });
    return listed.body.every((deployment: any) => deployment.status === 'ACTIVE');
  }, 120_000, 'both deployments ACTIVE');
  return ids;
}

/** Ports the cloud's child processes listen on: their socket inodes matched in /proc/net/tcp. */
function corePorts(cloud: CloudChild): number[] {
  const ports: number[] = [];
  for (const pid of childrenOf(cloud.process.pid!)) {
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' }).toString();
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (!inode) continue;
      for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        if (fields[9] === inode && fields[3] === '0A') ports.push(parseInt(fields[1]!.split(':')[1]!, 16));
      }
    }
  }
  return ports;
}

t.test('SIGTERM stops every core and leaves no process or listening port', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-cloud-cli-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const cloud = await startCloudChild(dataDir);
  const key = /cloud API key \(shown once; send it as X-svc-key\): (fck_\S+)/.exec(cloud.stdout())?.[1];
  t.ok(key, 'the generated cloud API key is printed once');
  t.equal((await sendRequest(cloud.url, 'GET', '/health')).body.status, 'UP');
  await twoDeployments(cloud, key!);
  const cores = childrenOf(cloud.process.pid!);
  t.equal(cores.length, 2, 'two core processes run under the cloud');
  const ports = corePorts(cloud);
  t.equal(ports.length, 2, 'each listening on a port of its own');
  for (const port of ports) t.ok(await portOpen(port), `core port ${port} is open`);
  const cloudPort = Number(new URL(cloud.url).port);

  cloud.process.kill('SIGTERM');
  t.equal(await cloud.exited, 0, 'the cloud exits 0');
  for (const pid of cores) t.notOk(alive(pid), `core ${pid} is gone`);
  for (const port of [...ports, cloudPort]) t.notOk(await portOpen(port), `nothing listens on ${port}`);

  const restarted = await startCloudChild(dataDir);
  t.notMatch(restarted.stdout(), /cloud API key/, 'the key is not printed again');
  const listed = await sendRequest(restarted.url, 'GET', '/deployments', undefined, { 'x-svc-key': key! });
  t.equal(listed.status, 200, 'the generated key is still the key');
  t.equal(listed.body.length, 2);
  restarted.process.kill('SIGTERM');
  t.equal(await restarted.exited, 0);
});

t.test('a cloud killed outright still leaves no core running', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-cloud-cli-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const key = 'cloud-cli-key-0123456789abcdef-0123456789';
  const cloud = await startCloudChild(dataDir, { FOLIO_CLOUD_API_KEY: key });
  t.notMatch(cloud.stdout(), /cloud API key/, 'a configured key is not printed');
  await twoDeployments(cloud, key);
  const cores = childrenOf(cloud.process.pid!);
  t.equal(cores.length, 2);
  const ports = corePorts(cloud);
  cloud.process.kill('SIGKILL');
  await cloud.exited;
  await waitUntil(() => cores.every((pid) => !alive(pid)), 30_000, 'the orphaned cores to stop');
  t.pass('every core stopped when its parent was killed');
  for (const port of ports) t.notOk(await portOpen(port), `nothing listens on ${port}`);
});
