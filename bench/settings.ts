// Bench settings from the environment. The defaults are the full run whose figures go on record; the
// FOLIO_BENCH_* variables shorten it for a quick check while working on the code.
//
//   FOLIO_BENCH_QUICK=1        2 s loads, 2 rounds, 100,000 balances (results go to <name>.quick.json)
//   FOLIO_BENCH_SECONDS=n      seconds per measured load (engine modes, each HTTP round, queued ingest)
//   FOLIO_BENCH_ROUNDS=n       interleaved rounds per server in the http bench (at least 2)
//   FOLIO_BENCH_BALANCES=n     balances created by the memory bench
//   FOLIO_BENCH_CLIENTS=n      concurrent in-process clients in the engine bench
//   FOLIO_BENCH_SERVER_LOG_LEVEL  log level of the Folio child servers (default warn; info logs every
//                              request, which costs throughput, but also shows why a server stopped)

export interface BenchSettings {
  /** True when anything was shortened: the figures are then not the ones to put on record. */
  quick: boolean;
  seconds: number;
  rounds: number;
  balances: number;
  engineClients: number;
  /** Concurrent HTTP connections for the http and queued benches. */
  connections: number;
}

const FULL: BenchSettings = { quick: false, seconds: 10, rounds: 3, balances: 1_000_000, engineClients: 1024, connections: 64 };
const QUICK: BenchSettings = { ...FULL, quick: true, seconds: 2, rounds: 2, balances: 100_000 };

export function loadSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const settings = { ...(env.FOLIO_BENCH_QUICK === '1' ? QUICK : FULL) };
  const overrides: Array<[keyof BenchSettings, string, number]> = [
    ['seconds', 'FOLIO_BENCH_SECONDS', 1],
    ['rounds', 'FOLIO_BENCH_ROUNDS', 2],
    ['balances', 'FOLIO_BENCH_BALANCES', 1],
    ['engineClients', 'FOLIO_BENCH_CLIENTS', 1],
  ];
  for (const [key, name, minimum] of overrides) {
    const value = envInteger(env, name, minimum);
    if (value !== undefined) (settings as Record<string, unknown>)[key] = value;
  }
  settings.quick = settings.seconds < FULL.seconds || settings.rounds < FULL.rounds || settings.balances < FULL.balances;
  return settings;
}

/** The whole number `name` holds in `env`, at least `minimum`; undefined when it is unset or empty. */
export function envInteger(env: NodeJS.ProcessEnv, name: string, minimum: number): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < minimum) throw new Error(`${name} must be an integer >= ${minimum}, not ${text}`);
  return value;
}
