import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
const dataDir = fs.mkdtempSync('/tmp/fz-kill-');
function start() {
  const child = spawn(process.execPath, ['dist/bin/folio.js', 'serve'], { env: { ...process.env, FOLIO_PORT: '0', FOLIO_HOST: '127.0.0.1', FOLIO_DATA_DIR: dataDir, FOLIO_LOG_LEVEL: 'error' }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => { let out = ''; child.stdout.on('data', (d) => { out += d; const m = /listening on (\S+)/.exec(out); if (m) resolve({ child, url: m[1] }); }); });
}
const post = (url, path, body) => fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => [r.status, await r.text()]).catch((e) => [0, String(e)]);
let s = await start();
let acked = 0, stop = false;
const load = async () => { while (!stop) { const [st] = await post(s.url, '/transactions', { precise_amount: 1, currency: 'USD', source: '@a', destination: '@b', allow_overdraft: true, skip_queue: Math.random() < 0.5 }); if (st === 201) acked++; } };
const workers = Array.from({ length: 16 }, load);
await new Promise((r) => setTimeout(r, Number(process.argv[2] ?? 1500)));
if (process.argv[3] === 'snap') console.log('snapshot', (await post(s.url, '/admin/snapshots', {}))[1].slice(0, 100));
if (process.argv[3] === 'snap') await new Promise((r) => setTimeout(r, 300));
s.child.kill('SIGKILL'); stop = true; await Promise.all(workers);
console.log('acked before kill', acked);
s = await start();
for (let i = 0; i < 20; i++) await post(s.url, '/transactions', { precise_amount: 1, currency: 'USD', source: '@a', destination: '@b', allow_overdraft: true, skip_queue: true });
s.child.kill('SIGTERM'); await new Promise((r) => s.child.on('exit', r));
const v = spawnSync(process.execPath, ['dist/bin/folio.js', 'verify', '--data', dataDir], { encoding: 'utf8' });
console.log((v.stdout + v.stderr).split('\n').filter((l) => /FAULT|verify:|log:/.test(l)).join('\n'));
fs.rmSync(dataDir, { recursive: true, force: true });
