// Settings of `folio cloud`, from the environment: FOLIO_CLOUD_PORT (default 5002), FOLIO_CLOUD_HOST
// (default 127.0.0.1), FOLIO_CLOUD_DATA_DIR (default ./data-cloud), FOLIO_CLOUD_API_KEY (when unset, one
// is generated at the first start and printed once), FOLIO_LOG_LEVEL, and for every core it runs
// FOLIO_CLOUD_CORE_HOOKS_ALLOW_PRIVATE_NETWORKS (hooks may deliver to loopback and private addresses;
// off unless set: cores do not read the control plane's own FOLIO_* settings, core-process.ts). The
// limits are named here so the services and tests share them.

import { ConfigError, parseFlag } from '../app/config.js';
import { masterKeyRefusal } from '../http/app.js';

export interface CloudConfig {
  host: string;
  port: number;
  data_dir: string;
  /** The cloud API key from the environment; empty means the stored one (or a new one at first start). */
  api_key: string;
  log_level: string;
  /** Hooks of every core may deliver to loopback and private addresses. */
  core_hooks_allow_private_networks?: boolean;
}

export const CLOUD_LIMITS = {
  /** Authorization codes live this long and are redeemed once. */
  code_ttl_ms: 10 * 60 * 1000,
  access_token_ttl_ms: 60 * 60 * 1000,
  /** A refresh token family ends this long after the sign-in that started it, however often it rotates. */
  refresh_family_ttl_ms: 30 * 24 * 60 * 60 * 1000,
  /** A sign-in page stays usable this long; then the flow starts again from the client. */
  sign_in_page_ttl_ms: 10 * 60 * 1000,
  sign_in_pages_max: 10_000,
  sign_in_attempts_max: 5,
  /** Redirect URIs per client, and their length. */
  redirect_uris_max: 10,
  redirect_uri_length_max: 2048,
  form_bytes_max: 16 * 1024,
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
  return config;
}
