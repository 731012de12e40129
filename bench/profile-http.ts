// `node dist/bench/profile-http.js [seconds] [dir]`: runs synchronous transfers over HTTP against a Folio
// server with the CPU profiler on and prints its stage budget (stage-budget.ts) and the functions that
// took most of the main thread's time, keeping the profile for a closer look (Chrome DevTools or
// `node dist/bench/profile-http.js` again). The tool behind the per-stage table of docs/performance.md.

import fs from 'node:fs';
import path from 'node:path';
import { runLoad } from './load.js';
import { expectJson, PROFILED_STOP_GRACE_MS, startFolio } from './servers.js';
import { mainThreadProfile, stageBudget, topFunctions } from './stage-budget.js';

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 10);
  const dir = path.resolve(process.argv[3] ?? fs.mkdtempSync('/tmp/folio-profile-'));
  fs.mkdirSync(dir, { recursive: true });
  const server = await startFolio('profile', { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`], stopGraceMs: PROFILED_STOP_GRACE_MS });
  let requests = 0;
  try {
    await expectJson(server.url, 'POST', '/transactions', 201, {
      description: 'test', source: '@bench-world', destination: '@bench-src', precise_amount: '1000000000000000000', precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true,
    });
    const body = JSON.stringify({ source: '@bench-src', destination: '@bench-dst', precise_amount: 1, precision: 100, currency: 'USD', description: 'http bench', skip_queue: true });
    for (const round of ['warm-up', 'profiled']) {
      const summary = await runLoad({ title: round, url: server.url, path: '/transactions', body, connections: 64, seconds: round === 'warm-up' ? 3 : seconds });
      requests += summary.responses2xx;
    }
  } finally {
    await server.stop();
  }
  const profile = mainThreadProfile(dir);
  for (const cost of stageBudget(profile, requests)) process.stdout.write(`${cost.stage.padEnd(24)} ${cost.micros_per_request.toFixed(1).padStart(7)} µs\n`);
  process.stdout.write('\n');
  for (const row of topFunctions(profile, requests, 40)) process.stdout.write(`${row.micros_per_request.toFixed(2).padStart(7)} µs  ${row.stage.padEnd(22)} ${row.frame}\n`);
  process.stdout.write(`\nprofiles kept in ${dir}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
