// The result files the benches leave in bench/results (see report.ts writeResult), read back for the
// report: for each bench the newest result. A full report reads only full runs (`<name>.json`); a quick
// report takes whichever of `<name>.json` and `<name>.quick.json` ran last, so a quick check still
// shows every bench, each marked with the kind of run it came from.

import fs from 'node:fs';
import path from 'node:path';
import type { Figure } from '../report.js';

export interface StoredMachine {
  cpus: number;
  cpu_model: string;
  memory_bytes: number;
  node: string;
  platform: string;
  load_average_at_start: number[];
  load_average_at_end: number[];
}

export interface StoredResult {
  bench: string;
  started_at: string;
  machine: StoredMachine;
  settings: { quick: boolean } & Record<string, unknown>;
  figures: Array<Figure & { met?: boolean }>;
  details: Record<string, unknown>;
}

const RESULT_FILE = /^([a-z0-9-]+)(\.quick)?\.json$/;

function readResult(file: string): StoredResult {
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as StoredResult;
  if (typeof parsed.bench !== 'string' || !Array.isArray(parsed.figures) || typeof parsed.started_at !== 'string') {
    throw new Error(`${file} is not a bench result`);
  }
  return parsed;
}

/** The newest result of each bench in `dir`, in bench-name order. */
export function newestResults(dir: string, includeQuick: boolean): StoredResult[] {
  if (!fs.existsSync(dir)) return [];
  const newest = new Map<string, StoredResult>();
  for (const name of fs.readdirSync(dir).sort()) {
    const match = RESULT_FILE.exec(name);
    if (!match || (match[2] && !includeQuick)) continue;
    const result = readResult(path.join(dir, name));
    const held = newest.get(match[1]!);
    if (!held || Date.parse(result.started_at) > Date.parse(held.started_at)) newest.set(match[1]!, result);
  }
  return [...newest.keys()].sort().map((bench) => newest.get(bench)!);
}

export function findResult(results: StoredResult[], bench: string): StoredResult | undefined {
  return results.find((result) => result.bench === bench);
}
