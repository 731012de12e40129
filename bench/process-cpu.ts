// CPU time a process has used (user + system, all its threads), read from /proc/<pid>/stat. On this
// shared VM the server's CPU per request is a much steadier figure than requests per second, which
// swings with whatever else the host is doing.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second, in which /proc reports CPU times. */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    if (!Number.isInteger(value) || value <= 0) throw new Error(`getconf CLK_TCK gave ${value}`);
    ticksPerSecond = value;
  }
  return ticksPerSecond;
}

/** utime + stime of the process in microseconds (resolution: one clock tick). */
export function processCpuMicros(pid: number): number {
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may contain spaces; count fields after it.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]); // field 14
  const stime = Number(fields[12]); // field 15
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot read CPU times of pid ${pid}`);
  return ((utime + stime) * 1_000_000) / clockTicksPerSecond();
}

/** What Node names a process's main thread (the engine's thread in `folio serve`). */
export const MAIN_THREAD_NAME = 'MainThread';

/** utime + stime of each thread of the process in microseconds, by thread name (summed over threads of one name). */
export function threadCpuMicros(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tids) {
    let name: string;
    let text: string;
    try {
      name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      text = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const micros = ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / clockTicksPerSecond();
    byName.set(name, (byName.get(name) ?? 0) + micros);
  }
  return byName;
}

/** Pids of the process's descendants alive now (found by their parent pid in /proc/<pid>/stat). */
export function descendantPids(pid: number): number[] {
  const childrenOf = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended between the listing and the read
    }
    const parent = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]); // field 4
    const siblings = childrenOf.get(parent);
    if (siblings) siblings.push(Number(entry));
    else childrenOf.set(parent, [Number(entry)]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const next = childrenOf.get(queue.pop()!) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/** utime + stime of the process and its descendants alive now, in microseconds (a server made of processes: PostgreSQL). */
export function processTreeCpuMicros(pid: number): number {
  let total = processCpuMicros(pid);
  for (const child of descendantPids(pid)) {
    try {
      total += processCpuMicros(child);
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

export interface IdleWait {
  /** Below this much CPU (in cores) over one window, the process counts as idle. */
  coresMax: number;
  windowMs: number;
  timeoutMs: number;
}

/**
 * Waits until what `cpuMicros` reads grows by less than `coresMax` cores over a window: a server that has
 * finished the work an earlier load left it (an index catching up, a snapshot, a vacuum). Resolves
 * false if it is still busy after `timeoutMs`.
 */
export async function waitUntilIdle(cpuMicros: () => number, wait: IdleWait): Promise<boolean> {
  const deadline = performance.now() + wait.timeoutMs;
  let before = cpuMicros();
  for (;;) {
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, wait.windowMs));
    const after = cpuMicros();
    const cores = (after - before) / ((performance.now() - started) * 1000);
    if (cores < wait.coresMax) return true;
    if (performance.now() > deadline) return false;
    before = after;
  }
}
