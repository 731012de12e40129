// Where a synchronous transfer's server CPU goes, stage by stage, from a CPU profile of the server under
// load (node --cpu-prof on the Folio child). Each sample is charged to the first frame, walking from the
// leaf towards the root, whose script matches a stage below; native and engine-internal frames (no
// script) are charged to whoever called them. Divided by the requests the server answered while
// profiled, that gives microseconds per request for each stage, so a change shows where it moved time.

import fs from 'node:fs';
import path from 'node:path';

/** Stages in the order a request meets them; the first pattern that matches a frame's script wins. */
const STAGES: Array<{ stage: string; scripts: RegExp; functions?: RegExp }> = [
  { stage: 'request log + metrics', scripts: /\/(pino|prom-client|sonic-boom|thread-stream)\/|\/http\/(request-log|request-metrics|metrics)\.js/ },
  { stage: 'auth + access', scripts: /\/http\/(auth|loopback-host|route-scopes|api-key-usage|scopes)\.js/ },
  { stage: 'body read + parse', scripts: /\/(koa-body|raw-body|co-body|inflation|iconv-lite)\/|\/http\/(json-body|lossless-json)\.js/ },
  { stage: 'validate', scripts: /\/zod\/|\/http\/(validation|[a-z-]*-schemas|transaction-commands|time-input)\.js|\/wire\/amounts\.js/ },
  { stage: 'row hash', scripts: /\/engine\/transaction-hash\.js|node:internal\/crypto\/hash/ },
  { stage: 'ids', scripts: /\/app\/uuid-v7-ids\.js|node:internal\/crypto\/random/ },
  { stage: 'decide + apply', scripts: /\/engine\// },
  { stage: 'log encode', scripts: /\/codec\/|\/wal\/log-record-codec\.js/ },
  { stage: 'log commit (LMDB)', scripts: /\/(lmdb|ordered-binary|msgpackr)\/|\/wal\/lmdb-log\.js/ },
  { stage: 'lookup store', scripts: /\/lookups\// },
  { stage: 'render + respond', scripts: /\/wire\/|\/http\/(respond|routes\/[a-z-]+)\.js/ },
  { stage: 'index hand-off', scripts: /\/index\// },
  { stage: 'hooks', scripts: /\/hooks\/|\/(got|p-queue)\// },
  { stage: 'HTTP + Koa', scripts: /node:_http|node:net|node:internal\/(http|stream|streams)|node:stream|\/(koa|koa-compose|@koa\/router|statuses|on-finished|type-is|content-type|accepts|mime-types|path-to-regexp)\// },
];

// A Map, not an object literal: a frame named `constructor` or `toString` must not find Object's own.
const SPECIAL = new Map([['(garbage collector)', 'GC'], ['(idle)', 'idle'], ['(program)', 'runtime (program)']]);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface StageCost {
  stage: string;
  /** Microseconds of the profiled thread per request. */
  micros_per_request: number;
  share: number;
}

/** Charges every sample of a profile to a stage; returns microseconds per request by stage, largest first. */
export function stageBudget(profile: CpuProfile, requests: number): StageCost[] {
  const { stageOf } = classifier(profile);
  const micros = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const stage = stageOf(id);
    micros.set(stage, (micros.get(stage) ?? 0) + delta);
    if (stage !== 'idle') busy += delta;
  });
  return [...micros]
    .map(([stage, total]) => ({ stage, micros_per_request: total / requests, share: stage === 'idle' ? 0 : total / busy }))
    .sort((a, b) => b.micros_per_request - a.micros_per_request);
}

/** The functions with the most self time, with the stage each is charged to. */
export function topFunctions(profile: CpuProfile, requests: number, count: number): Array<{ frame: string; stage: string; micros_per_request: number }> {
  const { stageOf, byId } = classifier(profile);
  const self = new Map<string, { stage: string; micros: number }>();
  profile.samples.forEach((id, index) => {
    const { functionName, url } = (byId.get(id) as ProfileNode).callFrame;
    const frame = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}`;
    const entry = self.get(frame) ?? { stage: stageOf(id), micros: 0 };
    entry.micros += profile.timeDeltas[index] ?? 0;
    self.set(frame, entry);
  });
  return [...self].map(([frame, entry]) => ({ frame, stage: entry.stage, micros_per_request: entry.micros / requests }))
    .sort((a, b) => b.micros_per_request - a.micros_per_request).slice(0, count);
}

function classifier(profile: CpuProfile): { stageOf: (id: number) => string; byId: Map<number, ProfileNode> } {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const stageOfNode = new Map<number, string>();
  const stageOf = (id: number): string => {
    const known = stageOfNode.get(id);
    if (known !== undefined) return known;
    let stage = 'other';
    const leaf = byId.get(id) as ProfileNode;
    const special = SPECIAL.get(leaf.callFrame.functionName);
    if (special) stage = special;
    else {
      for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
        const url = byId.get(cursor)?.callFrame.url ?? '';
        if (url === '') continue;
        const found = STAGES.find((entry) => entry.scripts.test(url));
        if (found) {
          stage = found.stage;
          break;
        }
      }
    }
    stageOfNode.set(id, stage);
    return stage;
  };
  return { stageOf, byId };
}

/** The main thread's profile among those node --cpu-prof wrote into `dir` (thread id 0 in the name). */
export function mainThreadProfile(dir: string): CpuProfile {
  const files = fs.readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  const main = files.find((name) => /^CPU\.[^.]+\.[^.]+\.\d+\.0\.\d+\.cpuprofile$/.test(name)) ?? files[0];
  if (!main) throw new Error(`no CPU profile in ${dir}`);
  return JSON.parse(fs.readFileSync(path.join(dir, main), 'utf8')) as CpuProfile;
}

/** Mean milliseconds of one 4 KiB write followed by fdatasync on the file system of `dir`. */
export function fdatasyncMs(dir: string, rounds = 200): number {
  const file = path.join(dir, 'fdatasync-probe');
  const handle = fs.openSync(file, 'w');
  const block = Buffer.alloc(4096, 1);
  try {
    for (let index = 0; index < 10; index += 1) {
      fs.writeSync(handle, block, 0, block.length, 0);
      fs.fdatasyncSync(handle);
    }
    const started = performance.now();
    for (let index = 0; index < rounds; index += 1) {
      fs.writeSync(handle, block, 0, block.length, index * block.length);
      fs.fdatasyncSync(handle);
    }
    return (performance.now() - started) / rounds;
  } finally {
    fs.closeSync(handle);
    fs.rmSync(file, { force: true });
  }
}
