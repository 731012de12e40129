// Test hooks: files a test may name to steer a process from outside (its clocks, runtime/system-clock.ts;
// its log's disk, wal/injected-disk-full.ts). A process reads one only when FOLIO_TEST_HOOKS=1 *and* the
// hook's own variable names a file: no configuration file can turn one on, and without both variables
// nothing is read (docs/operations.md).

/** The file the test hook `variable` names, when the process runs with test hooks on; undefined otherwise. */
export function testHookFile(variable: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.FOLIO_TEST_HOOKS !== '1') return undefined;
  const file = env[variable];
  return file === undefined || file === '' ? undefined : file;
}
