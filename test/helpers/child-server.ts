// Folio as a child process, for tests that kill it: runs the built CLI (`dist/bin/folio.js serve`) with
// FOLIO_PORT=0 and reads the address it prints. `kill()` sends SIGKILL (a crash), `terminate()` SIGTERM.

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/bin/folio.js');

export interface ChildServer {
  url: string;
  process: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  kill(): Promise<number | string>;
  terminate(): Promise<number | string>;
  stderr(): string;
}

export async function startChildServer(dataDir: string, env: Record<string, string> = {}): Promise<ChildServer> {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, FOLIO_PORT: '0', FOLIO_HOST: '127.0.0.1', FOLIO_DATA_DIR: dataDir, FOLIO_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/[0-9.]+:\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${stderr}`));
    });
  });
  return {
    url,
    process: child,
    exited,
    kill() {
      child.kill('SIGKILL');
      return exited;
    },
    terminate() {
      child.kill('SIGTERM');
      return exited;
    },
    stderr: () => stderr,
  };
}
