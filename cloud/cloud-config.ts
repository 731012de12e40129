// Settings of `folio cloud`, from the environment: FOLIO_CLOUD_PORT (default 5002), FOLIO_CLOUD_HOST
// (default 127.0.0.1), FOLIO_CLOUD_DATA_DIR (default ./data-cloud), FOLIO_CLOUD_API_KEY (when unset, one
// is generated at the first start and printed once), FOLIO_LOG_LEVEL, FOLIO_CLOUD_PUBLIC_URL (the origin
// users and clients reach the cloud at, when a TLS-terminating proxy stands in front: the OAuth issuer, and
// https there makes the sign-in cookie Secure), FOLIO_CLOUD_TRUSTED_PROXIES (comma-separated addresses of
// such proxies, whose X-Forwarded-For names the client, and which are not held to the connection cap per
// address), the connection limits FOLIO_CLOUD_HEADERS_TIMEOUT_MS, FOLIO_CLOUD_REQUEST_TIMEOUT_MS,
// FOLIO_CLOUD_CONNECTIONS_MAX and FOLIO_CLOUD_CONNECTIONS_PER_ADDRESS_MAX (http/server/server-limits.ts), and for every core
// it runs FOLIO_CLOUD_CORE_HOOKS_ALLOW_PRIVATE_NETWORKS (hooks may deliver to loopback and private addresses;
// off unless set: cores do not read the control plane's own FOLIO_* settings, core-process.ts), and the
// proxy's rate of deployments created without one of their own, FOLIO_CLOUD_DEPLOYMENT_REQUESTS_PER_SECOND_DEFAULT
// and FOLIO_CLOUD_DEPLOYMENT_BURST_DEFAULT (0, the default: none; a burst of 0 is one second of the rate;
// docs/decisions-rate-limits.md). The other limits are named here so the services and tests share them.

import { ConfigError, parseBounded, parseFlag } from '../server/config.js';
import { RATE_BURST_MAX, REQUESTS_PER_SECOND_MAX } from '../http/access/rate-buckets.js';
import type { ApiKeyRateLimit } from '../engine/records.js';
import { masterKeyRefusal } from '../http/app.js';
import { connectionLimitsRefusal, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from '../http/server/server-limits.js';

export interface CloudConfig {
  host: string;
  port: number;
  data_dir: string;
  /** The cloud API key from the environment; empty means the stored one (or a new one at first start). */
  api_key: string;
  log_level: string;
  /** The origin users and clients reach the cloud at; unset: the address it listens on. */
  public_url?: string;
  /** Reverse proxies whose X-Forwarded-For is believed about the client's address (and not held to the cap per address); unset: none. */
  trusted_proxies?: string[];
  /** Unset fields take DEFAULT_CONNECTION_LIMITS. */
  connections?: Partial<ConnectionLimits>;
  /** Hooks of every core may deliver to loopback and private addresses. */
  core_hooks_allow_private_networks?: boolean;
  /** The proxy's rate of deployments created without one (the plan's default); unset: none. */
  deployment_rate_limit_default?: ApiKeyRateLimit;
}

export const CLOUD_LIMITS = {
  /** Authorization codes live this long and are redeemed once. */
  code_ttl_ms: 10 * 60 * 1000,
  access_token_ttl_ms: 60 * 60 * 1000,
  /** A refresh token family ends this long after the sign-in that started it, however often it rotates. */
  refresh_family_ttl_ms: 30 * 24 * 60 * 60 * 1000,
  /** A sign-in page stays usable this long; then the flow starts again from the client. */
  sign_in_page_ttl_ms: 10 * 60 * 1000,
  /** Failed sign-ins per account, and per client address, before the backoff starts (sign-in-throttle.ts). */
  sign_in_account_failures_free: 5,
  sign_in_address_failures_free: 20,
  /** The first backoff; each further failure doubles it, up to the max. */
  sign_in_backoff_first_ms: 1_000,
  sign_in_backoff_max_ms: 15 * 60 * 1000,
  /** An account or address with no failure for this long starts again from nothing. */
  sign_in_failures_forget_ms: 24 * 60 * 60 * 1000,
  /** Accounts and addresses the throttle remembers at most, each. */
  sign_in_throttle_entries_max: 100_000,
  /** Password checks (scrypt, 32 MiB and tens of ms each) running at once, and waiting for a turn. */
  password_checks_running_max: 2,
  password_checks_waiting_max: 16,
  /** Pages that led to a code, remembered (until they expire) so each is used once. */
  sign_in_pages_spent_max: 100_000,
  /** Redirect URIs per client, and their length. */
  redirect_uris_max: 10,
  redirect_uri_length_max: 2048,
  /** A sign-in form carries its sealed request (up to about 15 KB with the longest redirect_uri and state) and a password. */
  form_bytes_max: 32 * 1024,
  /** Requests to a core: status and cutover calls, and proxied requests without an answer yet. */
  core_request_timeout_ms: 30_000,
  proxy_timeout_ms: 30_000,
  /** Writes arriving during a cutover wait this long for the switch, then get 503 with Retry-After. */
  cutover_hold_ms: 3_000,
  cutover_held_writes_max: 10_000,
  /** A core gets this long to print its address, and this long to stop on SIGTERM before SIGKILL. */
  core_start_timeout_ms: 120_000,
  core_stop_grace_ms: 15_000,
  health_interval_ms: 2_000,
  health_timeout_ms: 2_000,
  /** Restarts of a core that died: backoff doubling from the first, at most this many within the window. */
  restart_backoff_first_ms: 500,
  restart_backoff_max_ms: 30_000,
  restarts_max: 5,
  restart_window_ms: 10 * 60 * 1000,
} as const;

export function loadCloudConfig(env: NodeJS.ProcessEnv = process.env): CloudConfig {
  const config: CloudConfig = {
    host: env.FOLIO_CLOUD_HOST || '127.0.0.1',
    port: 5002,
    data_dir: env.FOLIO_CLOUD_DATA_DIR || './data-cloud',
    api_key: env.FOLIO_CLOUD_API_KEY ?? '',
    log_level: env.FOLIO_LOG_LEVEL || 'info',
  };
  if (env.FOLIO_CLOUD_PORT !== undefined && env.FOLIO_CLOUD_PORT !== '') {
    const port = Number(env.FOLIO_CLOUD_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`FOLIO_CLOUD_PORT must be 0-65535, not ${env.FOLIO_CLOUD_PORT}`);
    config.port = port;
  }
  const privateHooks = env.FOLIO_CLOUD_CORE_HOOKS_ALLOW_PRIVATE_NETWORKS;
  if (privateHooks !== undefined && privateHooks !== '') {
    config.core_hooks_allow_private_networks = parseFlag('FOLIO_CLOUD_CORE_HOOKS_ALLOW_PRIVATE_NETWORKS', privateHooks);
  }
  const refusal = masterKeyRefusal(config.api_key);
  if (refusal) throw new ConfigError(refusal.replace('server.secret_key', 'FOLIO_CLOUD_API_KEY'));
  if (env.FOLIO_CLOUD_PUBLIC_URL) config.public_url = env.FOLIO_CLOUD_PUBLIC_URL;
  if (env.FOLIO_CLOUD_TRUSTED_PROXIES) config.trusted_proxies = env.FOLIO_CLOUD_TRUSTED_PROXIES.split(',').map((address) => address.trim()).filter((address) => address !== '');
  const connections: Partial<ConnectionLimits> = {};
  if (env.FOLIO_CLOUD_HEADERS_TIMEOUT_MS) connections.headers_timeout_ms = Number(env.FOLIO_CLOUD_HEADERS_TIMEOUT_MS);
  if (env.FOLIO_CLOUD_REQUEST_TIMEOUT_MS) connections.request_timeout_ms = Number(env.FOLIO_CLOUD_REQUEST_TIMEOUT_MS);
  if (env.FOLIO_CLOUD_CONNECTIONS_MAX) connections.connections_max = Number(env.FOLIO_CLOUD_CONNECTIONS_MAX);
  if (env.FOLIO_CLOUD_CONNECTIONS_PER_ADDRESS_MAX) connections.connections_per_address_max = Number(env.FOLIO_CLOUD_CONNECTIONS_PER_ADDRESS_MAX);
  config.connections = connections;
  const rate = env.FOLIO_CLOUD_DEPLOYMENT_REQUESTS_PER_SECOND_DEFAULT;
  const requestsPerSecond = rate ? parseBounded('FOLIO_CLOUD_DEPLOYMENT_REQUESTS_PER_SECOND_DEFAULT', rate, 0, REQUESTS_PER_SECOND_MAX) : 0;
  const burstText = env.FOLIO_CLOUD_DEPLOYMENT_BURST_DEFAULT;
  const burst = burstText ? parseBounded('FOLIO_CLOUD_DEPLOYMENT_BURST_DEFAULT', burstText, 0, RATE_BURST_MAX) : 0;
  if (requestsPerSecond > 0) config.deployment_rate_limit_default = { requests_per_second: requestsPerSecond, burst: burst === 0 ? requestsPerSecond : burst };
  const problem = cloudConfigRefusal(config);
  if (problem) throw new ConfigError(problem);
  return config;
}

/** The connection limits in force: the configured ones over the defaults. */
export function connectionLimitsOf(config: CloudConfig): ConnectionLimits {
  return { ...DEFAULT_CONNECTION_LIMITS, ...config.connections };
}

/** The public URL: an http or https origin, without a path, query or fragment. */
export function publicUrlOf(config: CloudConfig): URL | undefined {
  if (config.public_url === undefined || config.public_url === '') return undefined;
  let url: URL;
  try {
    url = new URL(config.public_url);
  } catch {
    throw new ConfigError(`FOLIO_CLOUD_PUBLIC_URL must be a URL, not ${config.public_url}`);
  }
  const origin = (url.protocol === 'https:' || url.protocol === 'http:') && url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
  if (!origin) throw new ConfigError(`FOLIO_CLOUD_PUBLIC_URL must be an http or https origin without a path, as https://cloud.example.com, not ${config.public_url}`);
  return url;
}

/** Why the settings beyond the API key cannot be used, or undefined. */
export function cloudConfigRefusal(config: CloudConfig): string | undefined {
  try {
    publicUrlOf(config);
  } catch (error) {
    return (error as Error).message;
  }
  const refusal = connectionLimitsRefusal(connectionLimitsOf(config));
  return refusal && `FOLIO_CLOUD_${refusal.split(' ')[0]!.toUpperCase()}: ${refusal}`;
}
