// A running control plane: the store, the services over it, the deployments' cores, and the HTTP
// server on 127.0.0.1. `startCloud` is what `folio cloud` runs and what the tests start in-process;
// `stop` stops accepting, abandons upgrades in progress, stops every core process (SIGTERM, waiting for
// each to exit) and closes the store.

import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { masterKeyRefusal } from '../http/app.js';
import { REDACTED_LOG_PATHS } from '../http/log-redaction.js';
import { isLoopback } from '../http/middleware/loopback-host.js';
import { createLimitedServer } from '../http/server/server-limits.js';
import { createCloudApp } from './cloud-app.js';
import { cloudConfigRefusal, connectionLimitsOf, publicUrlOf, type CloudConfig } from './cloud-config.js';
import { CloudStore } from './cloud-store.js';
import { Deployments } from './deployments.js';
import { ClientRegistry } from './oauth-clients.js';
import { newSecret, sha256Hex } from './secrets.js';
import { TokenService } from './token-service.js';
import { Upgrades, type UpgradeHooks } from './upgrade.js';
import { UserDirectory } from './users.js';

export interface CloudOptions {
  config: CloudConfig;
  logger?: Logger;
  now?: () => number;
  upgradeHooks?: UpgradeHooks;
  /** Log level of the cores (their stderr is passed on as warnings). */
  coreLogLevel?: string;
}

export interface RunningCloud {
  url: string;
  /** `METHOD /pattern` of the control plane's own routes (the fuzzer's table is checked against them). */
  routes: string[];
  /** Set when this start generated the cloud API key: shown once, never stored in clear. */
  generatedApiKey: string | undefined;
  deployments: Deployments;
  stop(): Promise<void>;
}

interface ApiKeyRecord {
  hash: string;
}

const SHUTDOWN_GRACE_MS = 10_000;

export async function startCloud(options: CloudOptions): Promise<RunningCloud> {
  const { config } = options;
  const refusal = masterKeyRefusal(config.api_key);
  if (refusal) throw new Error(refusal.replace('server.secret_key', 'the cloud API key'));
  const problem = cloudConfigRefusal(config);
  if (problem) throw new Error(problem);
  const logger = options.logger ?? pino({ level: config.log_level, base: { service: 'folio-cloud' }, redact: REDACTED_LOG_PATHS }, pino.destination({ dest: 2, sync: false }));
  const now = options.now ?? Date.now;
  const dataDir = path.resolve(config.data_dir);
  const store = CloudStore.open(dataDir);
  let generatedApiKey: string | undefined;
  let apiKeyHash: string;
  if (config.api_key !== '') apiKeyHash = sha256Hex(config.api_key);
  else {
    const stored = store.get<ApiKeyRecord>('config', 'api_key');
    if (stored) apiKeyHash = stored.hash;
    else {
      generatedApiKey = newSecret('fck');
      apiKeyHash = sha256Hex(generatedApiKey);
      await store.put('config', 'api_key', { hash: apiKeyHash } satisfies ApiKeyRecord);
    }
  }
  const users = new UserDirectory(store);
  const clients = new ClientRegistry(store);
  const tokens = new TokenService(store, clients, now);
  tokens.startPruning();
  const deployments = new Deployments(store, dataDir, logger, now, {
    logLevel: options.coreLogLevel ?? 'warn', hooksAllowPrivateNetworks: config.core_hooks_allow_private_networks ?? false,
    rateLimitDefault: config.deployment_rate_limit_default,
  });
  const upgrades = new Upgrades(deployments, logger, options.upgradeHooks);
  await deployments.boot();

  const loopbackOnly = isLoopback(config.host);
  // Known once the server listens, when no public URL is configured.
  let publicUrl = publicUrlOf(config);
  const app = createCloudApp({
    apiKeyHash, users, clients, tokens, deployments, upgrades, logger, now, loopbackOnly,
    publicUrl: () => publicUrl as URL, trustedProxies: config.trusted_proxies ?? [],
  });
  // A trusted proxy carries many clients' connections: only connections_max holds it.
  const server = createLimitedServer((req, res) => app.handle(req, res), connectionLimitsOf(config), { unlimitedAddresses: config.trusted_proxies ?? [] });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  publicUrl ??= new URL(`http://${host}:${address.port}`);

  let stopped: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    routes: app.router.stack.flatMap((layer) => layer.methods.filter((method) => method !== 'HEAD').map((method) => `${method} ${String(layer.path)}`)),
    generatedApiKey,
    deployments,
    stop() {
      stopped ??= (async () => {
        app.beginShutdown();
        const forced = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await upgrades.stop();
        await deployments.stopAll();
        await closed;
        clearTimeout(forced);
        tokens.stopPruning();
        app.close();
        await store.close();
        logger.flush?.();
      })();
      return stopped;
    },
  };
}
