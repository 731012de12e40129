// One HTTP worker thread (http-workers.ts starts them): the Koa app of `folio serve` over a RemoteLedger
// (remote-ledger.ts), listening on the server's port beside the other workers (SO_REUSEPORT: the kernel
// spreads connections over them). Bodies are read, parsed, validated and answers rendered here; only
// commands and reads cross to the engine's thread. The body bytes it holds count in the process's shared
// count (http/server/body-bytes-in-flight.ts), in this worker's own slot. A replicated node's worker serves through a request
// switch (request-switch.ts): every request is refused (503 REPL_REJOINING) while the engine's state says
// no ledger is served, the change feed's streams end when the ledger is replaced, and the node's
// replication (role, where writes go) is answered from the state (remote-ledger.ts).

import { parentPort, workerData } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp } from '../http/app.js';
import { AddressConnections } from '../http/server/address-connections.js';
import { BodyBytesInFlight } from '../http/server/body-bytes-in-flight.js';
import { RateBuckets, RemoteBucketCells } from '../http/access/rate-buckets.js';
import { Metrics } from '../http/metrics.js';
import type { RequestTotals } from '../http/request-metrics.js';
import { REDACTED_LOG_PATHS } from '../http/log-redaction.js';
import { SharedSeqs, type EngineState, type WorkerOrder, type WorkerReport } from './engine-channel.js';
import { closeServer, createHttpServer } from '../http/server/http-server.js';
import type { WorkerData } from './http-workers.js';
import { EngineClient, RemoteLedger, holdWhileWritesHeld, rebuilt, remoteBackup, remoteCutover, remoteInspector, remoteReplication, remoteSnapshots } from './remote-ledger.js';
import { RequestSwitch } from '../http/server/request-switch.js';
import { WorkerChangeFeed } from './worker-change-feed.js';
import { NodeRefusal } from '../http/ports/node-refusal.js';
import { BalanceHistoryReader } from '../index/history-reader.js';
import { HistoryProgress } from '../index/history-progress.js';

const data = workerData as WorkerData;
/** How often a worker tells the engine's thread its request counts (what other workers' scrapes show of it). */
const REQUESTS_REPORT_INTERVAL_MS = 1_000;
const report = (message: WorkerReport): void => parentPort!.postMessage(message);

async function main(): Promise<void> {
  const { settings } = data;
  const logger = pino({ level: settings.logLevel, base: { service: 'folio', worker: data.index }, redact: REDACTED_LOG_PATHS }, pino.destination({ dest: 2, sync: true }));
  const client = new EngineClient(data.channel, SharedSeqs.over(data.seqs));
  await client.ready;
  // The balance history is read here, on this thread: /at and /history cross to no other.
  const history = settings.history ? new BalanceHistoryReader(settings.history.dir, new HistoryProgress(settings.history.progress)) : undefined;
  const core = new RemoteLedger(client, { hookTargets: settings.hookTargets, index: settings.index, history });
  const feed = settings.feedDataDir === undefined ? undefined : new WorkerChangeFeed(client, settings.feedDataDir);
  // A scrape reaches one worker: it shows its own request counts summed with the others', which the
  // engine's thread asks them for (or, from one too busy to answer at once, as it last reported). It
  // reports its own first and shows exactly what it reported, and so does every worker, so whichever
  // answers the next scrape never shows a count lower than this one did.
  const reportRequests = (generation?: number): RequestTotals => {
    const totals = metrics.requestTotals();
    client.notify('host', 'reportRequests', [data.index, totals, generation]);
    return totals;
  };
  client.onReportWanted(reportRequests);
  const metrics: Metrics = new Metrics({
    queuedTransactions: () => client.state.queued,
    lookupBacklog: () => client.state.lookupBacklog,
    unflushedEvents: () => client.state.unflushedEvents,
  }, async () => {
    const own = reportRequests();
    const [, others] = await Promise.all([client.refreshState(), client.call('host', 'requestTotals', [data.index])]);
    metrics.showRequestsSummed([own, ...others]);
  });
  setInterval(() => reportRequests(), REQUESTS_REPORT_INTERVAL_MS).unref();
  client.onState((state) => {
    for (const [events, milliseconds] of state.commits) metrics.observeWalCommit(events, milliseconds);
  });
  const app = createApp({
    core, logger, metrics, version: settings.version,
    secretKey: settings.secretKey, listenHost: data.listen.host,
    tokenizationKey: settings.tokenizationKey ? Buffer.from(settings.tokenizationKey) : undefined,
    bodyBytesMax: settings.bodyBytesMax,
    bodyBytesInFlight: new BodyBytesInFlight(data.bodyBytes, settings.bodyBytesInFlightMax, data.index),
    snapshots: settings.snapshots ? remoteSnapshots(client) : undefined,
    cutover: settings.cutover ? remoteCutover(client) : undefined,
    backup: remoteBackup(client, settings.backupDir),
    feed,
    inspector: settings.inspector ? remoteInspector(client) : undefined,
    replication: settings.replication ? remoteReplication(client) : undefined,
    // A key's bucket is the process's, shared with every worker; its cell is asked of the engine's thread once.
    rateLimiting: {
      buckets: new RateBuckets(data.rateBuckets),
      cells: new RemoteBucketCells((apiKeyId) => client.call('host', 'rateBucketCell', [apiKeyId])),
      settings: settings.rateLimits ?? {},
    },
  });
  let listener: Parameters<typeof createHttpServer>[0] = app;
  if (settings.replication) {
    holdWhileWritesHeld(client, app.apiKeyUsage);
    const requests = new RequestSwitch(refusalOf(client.state));
    let generation = client.state.generation;
    const follow = (state: EngineState): void => {
      if (state.generation !== generation) {
        generation = state.generation;
        // Streams of the ledger replaced end; their clients reconnect, here or to another node.
        app.endStreams();
      }
      if (state.refusal && requests.current) requests.refuse(refusalOf(state));
      else if (!state.refusal && !requests.current) requests.serve(app);
    };
    follow(client.state);
    client.onState(follow);
    listener = requests.listener;
  }
  const addresses = AddressConnections.over(data.addresses);
  metrics.watchConnections(addresses);
  const server = createHttpServer(listener, settings.limits, addresses);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: data.listen.host, port: data.listen.port, reusePort: true }, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  report({ kind: 'listening', address, port });
  parentPort!.on('message', (order: WorkerOrder) => {
    if (order.kind !== 'shutdown') return;
    app.beginShutdown();
    void (async () => {
      await closeServer(server);
      // Key uses noted by the last requests, and every call still unanswered, reach the engine before
      // the channel closes: the engine's thread makes them durable as it closes the ledger.
      await app.apiKeyUsage.flush();
      await client.idle();
      feed?.close();
      data.channel.close();
      report({ kind: 'closed' });
    })();
  });
}

/** The refusal of every request while no ledger is served. */
function refusalOf(state: EngineState): NodeRefusal {
  const refusal = state.refusal === undefined ? undefined : rebuilt(state.refusal);
  return refusal instanceof NodeRefusal ? refusal : new NodeRefusal('REPL_REJOINING', 'this node is joining its replication group; retry shortly');
}

main().catch((error: unknown) => report({ kind: 'failed', message: (error as Error).message }));
