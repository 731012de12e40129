// `npm run nemesis -- [--minutes N] [--seed S] [--faults-max N] [--clients N] [--lease-ms N] [--json FILE]`:
// a nemesis run over a three-node replicated group (nemesis/nemesis.ts): N minutes of faults (default 5)
// drawn from seed S (default a fresh one, printed), at most --faults-max of them, then healing, recovery
// and the checks. Progress goes to stderr every 10 s; the report to stdout (and as JSON to FILE); exit 1
// on any violation, with the command that replays the same schedule.

import fs from 'node:fs';
import { DEFAULT_NEMESIS_OPTIONS, formatReport, runNemesis, type NemesisOptions } from './nemesis.js';

function parseArguments(argv: string[]): { options: NemesisOptions; minutes: number; json: string | undefined } {
  let minutes = 5;
  let json: string | undefined;
  const options: NemesisOptions = { ...DEFAULT_NEMESIS_OPTIONS, seed: Math.floor(Math.random() * 2 ** 31), chaos_ms: 0 };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const text = argv[++index];
    const number = Number(text);
    const whole = (): number => {
      if (!Number.isSafeInteger(number) || number < 0) throw new Error(`${flag} needs a whole number, not ${text}`);
      return number;
    };
    if (flag === '--minutes') {
      if (!(number > 0)) throw new Error(`--minutes needs a positive number, not ${text}`);
      minutes = number;
    } else if (flag === '--seed') options.seed = whole() >>> 0;
    else if (flag === '--faults-max') options.faults_max = whole();
    else if (flag === '--clients') options.clients = Math.max(1, whole());
    else if (flag === '--lease-ms') options.lease_ms = whole();
    else if (flag === '--json' && text !== undefined) json = text;
    else throw new Error(`unknown option ${flag} (--minutes, --seed, --faults-max, --clients, --lease-ms, --json)`);
  }
  options.chaos_ms = Math.round(minutes * 60_000);
  return { options, minutes, json };
}

const { options, minutes, json } = parseArguments(process.argv.slice(2));
options.progress = (line) => process.stderr.write(`${line}\n`);
const report = await runNemesis(options);
const replay = `npm run nemesis -- --seed ${options.seed} --minutes ${minutes}${options.faults_max < DEFAULT_NEMESIS_OPTIONS.faults_max ? ` --faults-max ${options.faults_max}` : ''}`
  + `${options.clients !== DEFAULT_NEMESIS_OPTIONS.clients ? ` --clients ${options.clients}` : ''}${options.lease_ms !== DEFAULT_NEMESIS_OPTIONS.lease_ms ? ` --lease-ms ${options.lease_ms}` : ''}`;
process.stdout.write(`${formatReport(report, replay)}\n`);
if (json) fs.writeFileSync(json, `${JSON.stringify({ ...report, replay }, null, 2)}\n`);
process.exit(report.violation_count === 0 ? 0 : 1);
