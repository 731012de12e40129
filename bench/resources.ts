// Everything a bench creates outside its own heap (temp directories, child processes) is registered
// here, so it is removed however the run ends: normally, by an exception, or by Ctrl-C. A child still
// alive at exit gets SIGKILL; temp directories are deleted synchronously on the way out.

import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NODE_FLAGS, nodeEnvironment } from '../threads/node-flags.js';

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let exitHooksInstalled = false;

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, cleaning up\n`);
      process.exit(130); // the exit hook above kills children and removes temp dirs
    });
  }
}

/** A new directory under `parent` (the OS temp dir unless named), removed when the process exits. */
export function makeTempDir(label: string, parent: string = os.tmpdir()): string {
  installExitHooks();
  const dir = fs.mkdtempSync(path.join(parent, `folio-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

export interface Child {
  process: ChildProcess;
  pid: number;
  /** Resolves with the exit code, or the signal name, once the process has ended. */
  exited: Promise<number | string>;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then SIGKILL if it has not ended within `graceMs`. */
  stop(graceMs?: number): Promise<number | string>;
}

/** Spawns a registered child process with piped stdio; it is killed at the latest when the bench exits. */
export function spawnChild(command: string, args: string[], options: SpawnOptions = {}): Child {
  installExitHooks();
  const child = spawn(command, args, { ...options, env: nodeEnvironment(options.env ?? process.env), stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  if (child.pid === undefined) throw new Error(`could not start ${command} ${args.join(' ')}`);
  return {
    process: child,
    pid: child.pid,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** The line a Folio server or control plane prints once it listens; group 1 is its URL. */
export const LISTENING_LINE = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

/** Resolves with the first match of `pattern` in the child's stdout, or rejects if it exits or times out. */
export function waitForOutput(child: Child, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const match = pattern.exec(child.stdout());
      if (match) {
        finish();
        resolve(match);
      }
      return match !== null;
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`no ${pattern} from pid ${child.pid} within ${timeoutMs} ms; stderr:\n${child.stderr()}`));
    }, timeoutMs);
    const onData = (): void => void check();
    const finish = (): void => {
      clearTimeout(timer);
      child.process.stdout?.off('data', onData);
    };
    child.process.stdout?.on('data', onData);
    void child.exited.then((code) => {
      if (check()) return;
      finish();
      reject(new Error(`pid ${child.pid} exited (${code}) early; stderr:\n${child.stderr()}`));
    });
    check();
  });
}

/**
 * Runs a Node script that prints one JSON object as its last stdout line and returns that object; a
 * non-zero exit or missing JSON is an error carrying the child's stderr.
 */
export async function runJsonChild<T>(script: string, args: string[], options: { env?: NodeJS.ProcessEnv; nodeArgs?: string[]; timeoutMs: number }): Promise<T> {
  const child = spawnChild(process.execPath, [...NODE_FLAGS, ...(options.nodeArgs ?? []), script, ...args], { env: options.env ?? process.env });
  child.process.stdin?.end();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.process.kill('SIGKILL');
  }, options.timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  const name = `${path.basename(script)} ${args.join(' ')}`;
  if (timedOut) throw new Error(`${name} took longer than ${options.timeoutMs} ms; stderr:\n${child.stderr()}`);
  if (code !== 0) throw new Error(`${name} exited with ${code}; stderr:\n${child.stderr()}`);
  const lines = child.stdout().trim().split('\n');
  try {
    return JSON.parse(lines[lines.length - 1] ?? '') as T;
  } catch {
    throw new Error(`${name} printed no JSON result; stdout:\n${child.stdout()}\nstderr:\n${child.stderr()}`);
  }
}
