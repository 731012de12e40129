// Configuration: embedded defaults, then an optional folio.json (given with --config, or ./folio.json
// when present), then FOLIO_* environment variables. Keys: server.host, server.port, server.secret_key,
// server.headers_timeout_ms (FOLIO_HEADERS_TIMEOUT_MS), server.request_timeout_ms (FOLIO_REQUEST_TIMEOUT_MS),
// server.connections_max (FOLIO_CONNECTIONS_MAX), server.connections_per_address_max
// (FOLIO_CONNECTIONS_PER_ADDRESS_MAX) (http/server/server-limits.ts), server.workers (FOLIO_WORKERS: the
// HTTP worker threads, default the machine's cores minus one and at least one; 0 serves HTTP on the
// engine's thread; workers/http-workers.ts), server.body_bytes_in_flight_max (FOLIO_BODY_BYTES_IN_FLIGHT_MAX:
// the request body bytes the process holds at once, over every HTTP thread; http/server/body-bytes-in-flight.ts),
// data_dir, snapshots.every_events, snapshots.every_seconds, snapshots.keep,
// hooks.allow_private_networks, hooks.seal_key (FOLIO_HOOK_SEAL_KEY), notifications.webhook_url (FOLIO_WEBHOOK_URL), notifications.webhook_secret
// (FOLIO_WEBHOOK_SECRET), notifications.webhook_headers (FOLIO_WEBHOOK_HEADERS, a JSON object, as Blnk's
// BLNK_WEBHOOK_HEADERS), notifications.timeout_seconds, notifications.retry_count, tokenization.secret
// (FOLIO_TOKENIZATION_SECRET: 32 bytes, or 64 hex digits), backup.dir (FOLIO_BACKUP_DIR),
// transaction.enable_queued_checks (FOLIO_TRANSACTION_ENABLE_QUEUED_CHECKS: Blnk's option of the same name,
// engine/decision-scope.ts). FOLIO_PORT=0 asks the OS for a free port. Two settings exist for a
// control plane that runs Folio as its child (environment only): FOLIO_FOLLOW_DATA_DIR starts the ledger
// as a follower of the one in that directory (see cutover/log-follower.ts), and FOLIO_STOP_ON_STDIN_END=1
// stops it when its standard input ends, which is when the parent holding the other end of the pipe
// has gone, however it went. Replication (docs/decisions-replication.md): replication.postgres_url
// (FOLIO_REPLICATION_URL) turns it on, replication.node_name (FOLIO_NODE_NAME, default the host name)
// names this node in its group, replication.advertise_url (FOLIO_ADVERTISE_URL, default the address it
// listens on) is where the others send writes when it leads, replication.lease_ms
// (FOLIO_REPLICATION_LEASE_MS) how long a leader's lease lasts. The query index's hold on writes
// (index/secondary-index.ts WriteHoldLimits, docs/decisions-query.md): index.lag_ms_max
// (FOLIO_INDEX_LAG_MS_MAX) is how far behind the log the index may fall before new writes wait for it,
// index.write_wait_ms_max (FOLIO_INDEX_WRITE_WAIT_MS_MAX) how long a write waits before it is refused 503.
// Fair use (http/access/rate-buckets.ts, docs/decisions-rate-limits.md): rate_limits.key_requests_per_second_default
// (FOLIO_KEY_REQUESTS_PER_SECOND_DEFAULT) and rate_limits.key_burst_default (FOLIO_KEY_BURST_DEFAULT) are
// the bucket of API keys made without a rate_limit, rate_limits.master_key_requests_per_second
// (FOLIO_MASTER_KEY_REQUESTS_PER_SECOND) and rate_limits.master_key_burst (FOLIO_MASTER_KEY_BURST) the
// master key's, which is every caller's when authentication is off. 0 (the default) is no limit; a burst
// of 0 with a rate set is one second's worth of the rate.

import fs from 'node:fs';
import os from 'node:os';
import { z } from 'zod';
import { masterKeyRefusal } from '../http/app.js';
import { tokenizationSecretBytes } from '../http/identity-tokens.js';
import { BODY_BYTES_IN_FLIGHT_MAX_DEFAULT, BODY_BYTES_IN_FLIGHT_MAX_LIMIT } from '../http/server/body-bytes-in-flight.js';
import { BODY_BYTES_MAX } from '../http/middleware/json-body.js';
import { connectionLimitsRefusal, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from '../http/server/server-limits.js';
import {
  DEFAULT_NOTIFICATION_RETRY_COUNT,
  DEFAULT_NOTIFICATION_TIMEOUT_SECONDS,
  type NotificationTarget,
} from '../hooks/notifications.js';
import { DEFAULT_SNAPSHOT_SCHEDULE, type SnapshotSchedule } from '../runtime/snapshot-service.js';
import { DEFAULT_WRITE_HOLD_LIMITS } from '../index/secondary-index.js';
import { RATE_BURST_MAX, REQUESTS_PER_SECOND_MAX, type RateLimitSettings } from '../http/access/rate-buckets.js';
import type { ApiKeyRateLimit } from '../engine/records.js';

/** HTTP worker threads at most: beyond the cores of any machine Folio runs on, each only costs memory. */
export const WORKERS_MAX = 64;

/** One worker per core but the engine's, and at least one. */
export function defaultWorkers(): number {
  return Math.min(WORKERS_MAX, Math.max(1, os.availableParallelism() - 1));
}

export interface FolioConfig {
  /** The connection limits: request deadlines and open connections (http/server/server-limits.ts). */
  server: { host: string; port: number; secret_key: string; workers: number; body_bytes_in_flight_max: number } & ConnectionLimits;
  data_dir: string;
  log_level: string;
  snapshots: SnapshotSchedule;
  /**
   * allow_private_networks: hooks may deliver to loopback and private addresses (hooks/hook-targets.ts).
   * seal_key: the key hook signing secrets are sealed with, 64 hex digits (empty: the data directory's
   * own, made at first start); every node of a replicated group needs the same one.
   */
  hooks: { allow_private_networks: boolean; seal_key: string };
  /** The server's notification webhook (Blnk's events: hooks/notifications.ts); empty url: none. */
  notifications: { webhook_url: string; webhook_secret: string; webhook_headers: Record<string, string>; timeout_seconds: number; retry_count: number };
  /** The key identity fields are tokenized with (http/identity-tokens.ts); empty: tokenization is off. */
  tokenization: { secret: string };
  /** Where POST /backup writes backups; empty: the route says none is configured. */
  backup: { dir: string };
  /**
   * How transactions are decided: enable_queued_checks refuses one its source cannot cover after what is
   * already queued against it (Blnk's transaction.enable_queued_checks; off by default, as in Blnk).
   */
  transaction: { enable_queued_checks: boolean };
  /** The data directory of the leader this ledger follows; empty for an ordinary ledger. */
  follow_data_dir: string;
  stop_on_stdin_end: boolean;
  /** A replicated group through PostgreSQL; empty postgres_url: a single node (the default). */
  replication: ReplicationConfig;
  /** When new writes wait for the query index, and how long (index/secondary-index.ts WriteHoldLimits). */
  index: { lag_ms_max: number; write_wait_ms_max: number };
  /** Fair use: 0 is no limit (http/access/rate-buckets.ts; rateLimitSettings turns this into buckets). */
  rate_limits: RateLimitsConfig;
}

export interface RateLimitsConfig {
  key_requests_per_second_default: number;
  key_burst_default: number;
  master_key_requests_per_second: number;
  master_key_burst: number;
}

/** The bounds of the index's hold on writes a configuration may set. */
export const INDEX_LAG_MS_MIN = 100;
export const INDEX_LAG_MS_MAX = 600_000;
export const INDEX_WRITE_WAIT_MS_MAX = 60_000;

export interface ReplicationConfig {
  postgres_url: string;
  node_name: string;
  /** Empty: http://<host>:<port> as the server listens. */
  advertise_url: string;
  lease_ms: number;
}

/** The shortest and longest lease a group may use (see replication/lease-rules.ts). */
export const LEASE_MS_MIN = 1_000;
export const LEASE_MS_MAX = 60_000;
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export const DEFAULT_CONFIG: FolioConfig = {
  server: {
    host: '127.0.0.1', port: 5001, secret_key: '', workers: defaultWorkers(), body_bytes_in_flight_max: BODY_BYTES_IN_FLIGHT_MAX_DEFAULT, ...DEFAULT_CONNECTION_LIMITS,
  },
  data_dir: './data',
  log_level: 'info',
  snapshots: DEFAULT_SNAPSHOT_SCHEDULE,
  hooks: { allow_private_networks: false, seal_key: '' },
  notifications: {
    webhook_url: '', webhook_secret: '', webhook_headers: {}, timeout_seconds: DEFAULT_NOTIFICATION_TIMEOUT_SECONDS, retry_count: DEFAULT_NOTIFICATION_RETRY_COUNT,
  },
  tokenization: { secret: '' },
  backup: { dir: '' },
  transaction: { enable_queued_checks: false },
  follow_data_dir: '',
  stop_on_stdin_end: false,
  replication: { postgres_url: '', node_name: '', advertise_url: '', lease_ms: 2_500 },
  index: { lag_ms_max: DEFAULT_WRITE_HOLD_LIMITS.lag_ms_max, write_wait_ms_max: DEFAULT_WRITE_HOLD_LIMITS.wait_ms_max },
  rate_limits: { key_requests_per_second_default: 0, key_burst_default: 0, master_key_requests_per_second: 0, master_key_burst: 0 },
};

/** The buckets a configuration asks for: a rate of 0 is none, a burst of 0 one second of the rate. */
export function rateLimitSettings(config: RateLimitsConfig): RateLimitSettings {
  const bucket = (requestsPerSecond: number, burst: number): ApiKeyRateLimit | undefined => (requestsPerSecond === 0
    ? undefined
    : { requests_per_second: requestsPerSecond, burst: burst === 0 ? Math.min(requestsPerSecond, RATE_BURST_MAX) : burst });
  return {
    keyDefault: bucket(config.key_requests_per_second_default, config.key_burst_default),
    master: bucket(config.master_key_requests_per_second, config.master_key_burst),
  };
}

const fileSchema = z.object({
  server: z.object({
    host: z.string().min(1).optional(),
    port: z.number().int().min(0).max(65535).optional(),
    secret_key: z.string().optional(),
    headers_timeout_ms: z.number().int().min(1).optional(),
    request_timeout_ms: z.number().int().min(1).optional(),
    connections_max: z.number().int().min(1).optional(),
    connections_per_address_max: z.number().int().min(1).optional(),
    workers: z.number().int().min(0).max(WORKERS_MAX).optional(),
    body_bytes_in_flight_max: z.number().int().min(BODY_BYTES_MAX).max(BODY_BYTES_IN_FLIGHT_MAX_LIMIT).optional(),
  }).optional(),
  data_dir: z.string().min(1).optional(),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  snapshots: z.object({
    every_events: z.number().int().min(0).optional(),
    every_seconds: z.number().min(0).optional(),
    keep: z.number().int().min(1).optional(),
  }).optional(),
  hooks: z.object({ allow_private_networks: z.boolean().optional(), seal_key: z.string().optional() }).optional(),
  notifications: z.object({
    webhook_url: z.string().max(2048).optional(),
    webhook_secret: z.string().optional(),
    webhook_headers: z.record(z.string(), z.string()).optional(),
    timeout_seconds: z.number().gt(0).max(60).optional(),
    retry_count: z.number().int().min(0).max(10).optional(),
  }).optional(),
  tokenization: z.object({ secret: z.string().optional() }).optional(),
  backup: z.object({ dir: z.string().optional() }).optional(),
  transaction: z.object({ enable_queued_checks: z.boolean().optional() }).optional(),
  replication: z.object({
    postgres_url: z.string().max(2048).optional(),
    node_name: z.string().optional(),
    advertise_url: z.string().max(2048).optional(),
    lease_ms: z.number().int().min(LEASE_MS_MIN).max(LEASE_MS_MAX).optional(),
  }).optional(),
  index: z.object({
    lag_ms_max: z.number().int().min(INDEX_LAG_MS_MIN).max(INDEX_LAG_MS_MAX).optional(),
    write_wait_ms_max: z.number().int().min(0).max(INDEX_WRITE_WAIT_MS_MAX).optional(),
  }).optional(),
  rate_limits: z.object({
    key_requests_per_second_default: z.number().int().min(0).max(REQUESTS_PER_SECOND_MAX).optional(),
    key_burst_default: z.number().int().min(0).max(RATE_BURST_MAX).optional(),
    master_key_requests_per_second: z.number().int().min(0).max(REQUESTS_PER_SECOND_MAX).optional(),
    master_key_burst: z.number().int().min(0).max(RATE_BURST_MAX).optional(),
  }).optional(),
});

/** The environment variable of each rate_limits setting, and its bound. */
const RATE_LIMIT_VARIABLES = [
  ['key_requests_per_second_default', 'FOLIO_KEY_REQUESTS_PER_SECOND_DEFAULT', REQUESTS_PER_SECOND_MAX],
  ['key_burst_default', 'FOLIO_KEY_BURST_DEFAULT', RATE_BURST_MAX],
  ['master_key_requests_per_second', 'FOLIO_MASTER_KEY_REQUESTS_PER_SECOND', REQUESTS_PER_SECOND_MAX],
  ['master_key_burst', 'FOLIO_MASTER_KEY_BURST', RATE_BURST_MAX],
] as const;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(configPath: string | undefined, env: NodeJS.ProcessEnv = process.env): FolioConfig {
  const config: FolioConfig = structuredClone(DEFAULT_CONFIG);
  const file = configPath ?? (fs.existsSync('folio.json') ? 'folio.json' : undefined);
  if (file) mergeFile(config, file);
  if (env.FOLIO_HOST) config.server.host = env.FOLIO_HOST;
  if (env.FOLIO_PORT !== undefined && env.FOLIO_PORT !== '') config.server.port = parsePort(env.FOLIO_PORT);
  if (env.FOLIO_SECRET_KEY !== undefined) config.server.secret_key = env.FOLIO_SECRET_KEY;
  if (env.FOLIO_HEADERS_TIMEOUT_MS) config.server.headers_timeout_ms = parseWhole('FOLIO_HEADERS_TIMEOUT_MS', env.FOLIO_HEADERS_TIMEOUT_MS);
  if (env.FOLIO_REQUEST_TIMEOUT_MS) config.server.request_timeout_ms = parseWhole('FOLIO_REQUEST_TIMEOUT_MS', env.FOLIO_REQUEST_TIMEOUT_MS);
  if (env.FOLIO_CONNECTIONS_MAX) config.server.connections_max = parseWhole('FOLIO_CONNECTIONS_MAX', env.FOLIO_CONNECTIONS_MAX);
  if (env.FOLIO_CONNECTIONS_PER_ADDRESS_MAX) {
    config.server.connections_per_address_max = parseWhole('FOLIO_CONNECTIONS_PER_ADDRESS_MAX', env.FOLIO_CONNECTIONS_PER_ADDRESS_MAX);
  }
  if (env.FOLIO_WORKERS !== undefined && env.FOLIO_WORKERS !== '') config.server.workers = parseWorkers(env.FOLIO_WORKERS);
  if (env.FOLIO_BODY_BYTES_IN_FLIGHT_MAX) {
    config.server.body_bytes_in_flight_max = parseBounded('FOLIO_BODY_BYTES_IN_FLIGHT_MAX', env.FOLIO_BODY_BYTES_IN_FLIGHT_MAX, BODY_BYTES_MAX, BODY_BYTES_IN_FLIGHT_MAX_LIMIT);
  }
  if (env.FOLIO_DATA_DIR) config.data_dir = env.FOLIO_DATA_DIR;
  if (env.FOLIO_LOG_LEVEL) config.log_level = env.FOLIO_LOG_LEVEL;
  if (env.FOLIO_FOLLOW_DATA_DIR) config.follow_data_dir = env.FOLIO_FOLLOW_DATA_DIR;
  if (env.FOLIO_STOP_ON_STDIN_END === '1') config.stop_on_stdin_end = true;
  if (env.FOLIO_SNAPSHOT_EVERY_EVENTS) config.snapshots.every_events = parseCount('FOLIO_SNAPSHOT_EVERY_EVENTS', env.FOLIO_SNAPSHOT_EVERY_EVENTS, 0);
  if (env.FOLIO_SNAPSHOT_EVERY_SECONDS) config.snapshots.every_seconds = parseCount('FOLIO_SNAPSHOT_EVERY_SECONDS', env.FOLIO_SNAPSHOT_EVERY_SECONDS, 0);
  if (env.FOLIO_SNAPSHOT_KEEP) config.snapshots.keep = parseCount('FOLIO_SNAPSHOT_KEEP', env.FOLIO_SNAPSHOT_KEEP, 1);
  if (env.FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS) config.hooks.allow_private_networks = parseFlag('FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS', env.FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS);
  if (env.FOLIO_HOOK_SEAL_KEY !== undefined) config.hooks.seal_key = env.FOLIO_HOOK_SEAL_KEY;
  if (config.hooks.seal_key !== '' && !/^[0-9a-fA-F]{64}$/.test(config.hooks.seal_key)) {
    throw new ConfigError('hooks.seal_key (FOLIO_HOOK_SEAL_KEY) must be 64 hex digits (32 bytes), for example: openssl rand -hex 32');
  }
  if (env.FOLIO_WEBHOOK_URL !== undefined) config.notifications.webhook_url = env.FOLIO_WEBHOOK_URL;
  if (env.FOLIO_WEBHOOK_SECRET !== undefined) config.notifications.webhook_secret = env.FOLIO_WEBHOOK_SECRET;
  if (env.FOLIO_WEBHOOK_HEADERS !== undefined && env.FOLIO_WEBHOOK_HEADERS !== '') config.notifications.webhook_headers = parseHeaders(env.FOLIO_WEBHOOK_HEADERS);
  config.notifications.webhook_headers = checkedHeaders(config.notifications.webhook_headers);
  if (env.FOLIO_TOKENIZATION_SECRET !== undefined) config.tokenization.secret = env.FOLIO_TOKENIZATION_SECRET;
  if (env.FOLIO_BACKUP_DIR !== undefined) config.backup.dir = env.FOLIO_BACKUP_DIR;
  if (env.FOLIO_INDEX_LAG_MS_MAX) config.index.lag_ms_max = parseBounded('FOLIO_INDEX_LAG_MS_MAX', env.FOLIO_INDEX_LAG_MS_MAX, INDEX_LAG_MS_MIN, INDEX_LAG_MS_MAX);
  if (env.FOLIO_INDEX_WRITE_WAIT_MS_MAX) {
    config.index.write_wait_ms_max = parseBounded('FOLIO_INDEX_WRITE_WAIT_MS_MAX', env.FOLIO_INDEX_WRITE_WAIT_MS_MAX, 0, INDEX_WRITE_WAIT_MS_MAX);
  }
  if (env.FOLIO_TRANSACTION_ENABLE_QUEUED_CHECKS) {
    config.transaction.enable_queued_checks = parseFlag('FOLIO_TRANSACTION_ENABLE_QUEUED_CHECKS', env.FOLIO_TRANSACTION_ENABLE_QUEUED_CHECKS);
  }
  if (env.FOLIO_REPLICATION_URL !== undefined) config.replication.postgres_url = env.FOLIO_REPLICATION_URL;
  if (env.FOLIO_NODE_NAME !== undefined) config.replication.node_name = env.FOLIO_NODE_NAME;
  if (env.FOLIO_ADVERTISE_URL !== undefined) config.replication.advertise_url = env.FOLIO_ADVERTISE_URL;
  if (env.FOLIO_REPLICATION_LEASE_MS) config.replication.lease_ms = parseCount('FOLIO_REPLICATION_LEASE_MS', env.FOLIO_REPLICATION_LEASE_MS, LEASE_MS_MIN);
  for (const [key, name, max] of RATE_LIMIT_VARIABLES) {
    const text = env[name];
    if (text !== undefined && text !== '') config.rate_limits[key] = parseBounded(name, text, 0, max);
  }
  checkReplication(config);
  if (config.tokenization.secret !== '' && !tokenizationSecretBytes(config.tokenization.secret)) {
    throw new ConfigError('tokenization.secret (FOLIO_TOKENIZATION_SECRET) must be 32 bytes: 32 characters or 64 hex digits');
  }
  const refusal = masterKeyRefusal(config.server.secret_key);
  if (refusal) throw new ConfigError(refusal);
  const { headers_timeout_ms, request_timeout_ms, connections_max, connections_per_address_max } = config.server;
  const limitsRefusal = connectionLimitsRefusal({ headers_timeout_ms, request_timeout_ms, connections_max, connections_per_address_max });
  if (limitsRefusal) throw new ConfigError(`server.${limitsRefusal}`);
  return config;
}

function mergeFile(config: FolioConfig, file: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`cannot read config ${file}: ${(error as Error).message}`);
  }
  const result = fileSchema.safeParse(parsed);
  if (!result.success) {
    throw new ConfigError(`config ${file}: ${result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  const values = result.data;
  Object.assign(config.server, values.server ?? {});
  if (values.data_dir) config.data_dir = values.data_dir;
  if (values.log_level) config.log_level = values.log_level;
  Object.assign(config.snapshots, values.snapshots ?? {});
  Object.assign(config.hooks, values.hooks ?? {});
  Object.assign(config.notifications, values.notifications ?? {});
  Object.assign(config.tokenization, values.tokenization ?? {});
  Object.assign(config.backup, values.backup ?? {});
  Object.assign(config.transaction, values.transaction ?? {});
  Object.assign(config.replication, values.replication ?? {});
  Object.assign(config.index, values.index ?? {});
  Object.assign(config.rate_limits, values.rate_limits ?? {});
}

/** Checks the replication settings when replication is on, and names the node by its host by default. */
function checkReplication(config: FolioConfig): void {
  const replication = config.replication;
  if (replication.postgres_url === '') return;
  if (!/^postgres(ql)?:\/\//.test(replication.postgres_url)) {
    // The URL holds a password: it is never echoed back.
    throw new ConfigError('replication.postgres_url (FOLIO_REPLICATION_URL) must be a postgres:// or postgresql:// URL');
  }
  if (config.follow_data_dir !== '') throw new ConfigError('a replicated node does not follow a data directory (FOLIO_FOLLOW_DATA_DIR): standbys follow the group');
  if (replication.node_name === '') replication.node_name = os.hostname().replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 63) || 'folio';
  if (!NODE_NAME.test(replication.node_name)) {
    throw new ConfigError('replication.node_name (FOLIO_NODE_NAME) must be 1-63 letters, digits, dots, dashes or underscores');
  }
  if (replication.advertise_url !== '') {
    let url: URL;
    try {
      url = new URL(replication.advertise_url);
    } catch {
      throw new ConfigError('replication.advertise_url (FOLIO_ADVERTISE_URL) must be a URL such as http://10.0.0.5:5001');
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw new ConfigError('replication.advertise_url (FOLIO_ADVERTISE_URL) must be http(s)://host[:port], with no path, query or credentials');
    }
    replication.advertise_url = url.origin;
  }
  if (!(replication.lease_ms >= LEASE_MS_MIN && replication.lease_ms <= LEASE_MS_MAX)) {
    throw new ConfigError(`replication.lease_ms must be ${LEASE_MS_MIN}-${LEASE_MS_MAX}`);
  }
}

/** The tokenization key, or undefined when tokenization is off (loadConfig has checked its length). */
export function tokenizationKey(config: FolioConfig): Buffer | undefined {
  return config.tokenization.secret === '' ? undefined : tokenizationSecretBytes(config.tokenization.secret);
}

/** The notification webhook as hook delivery takes it, or undefined when none is configured. */
export function notificationTarget(config: FolioConfig): NotificationTarget | undefined {
  const { webhook_url, webhook_secret, webhook_headers, timeout_seconds, retry_count } = config.notifications;
  return webhook_url === '' ? undefined : { url: webhook_url, secret: webhook_secret, headers: webhook_headers, timeout_seconds, retry_count };
}

/** Headers one webhook configuration may name, and the length of a value. */
export const WEBHOOK_HEADERS_MAX = 16;
const WEBHOOK_HEADER_VALUE_LENGTH_MAX = 1_024;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
/** Headers Folio sets itself on every delivery (or the connection owns): a configuration cannot name them. */
const RESERVED_HEADER = /^(x-folio-|x-blnk-|x-hook-|x-event-id$|host$|content-length$|transfer-encoding$|connection$|user-agent$)/;

function parseHeaders(text: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError('FOLIO_WEBHOOK_HEADERS must be a JSON object of header names to values');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError('FOLIO_WEBHOOK_HEADERS must be a JSON object of header names to values');
  return parsed as Record<string, string>;
}

/**
 * The webhook's headers with lower-case names, each checked: a header token for a name, a value without
 * line breaks (no header can smuggle in another), none of the headers Folio signs or sets. Blnk's
 * configurations often name Content-Type: Folio sends application/json whatever it says.
 */
function checkedHeaders(headers: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(headers);
  if (entries.length > WEBHOOK_HEADERS_MAX) throw new ConfigError(`notifications.webhook_headers names at most ${WEBHOOK_HEADERS_MAX} headers`);
  const checked: Record<string, string> = {};
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw new ConfigError(`notifications.webhook_headers: ${JSON.stringify(name)} is not a header name`);
    if (typeof value !== 'string' || value.length > WEBHOOK_HEADER_VALUE_LENGTH_MAX || /[\r\n\0]/.test(value)) {
      throw new ConfigError(`notifications.webhook_headers: the value of ${name} must be text of at most ${WEBHOOK_HEADER_VALUE_LENGTH_MAX} characters on one line`);
    }
    if (RESERVED_HEADER.test(lower)) throw new ConfigError(`notifications.webhook_headers: ${name} is set by Folio itself`);
    if (lower === 'content-type') continue;
    Object.defineProperty(checked, lower, { value, enumerable: true, writable: true, configurable: true });
  }
  return checked;
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`FOLIO_PORT must be 0-65535, not ${text}`);
  return port;
}

function parseWorkers(text: string): number {
  const workers = Number(text);
  if (!/^[0-9]{1,3}$/.test(text) || workers > WORKERS_MAX) throw new ConfigError(`FOLIO_WORKERS must be 0-${WORKERS_MAX}, not ${text}`);
  return workers;
}

function parseCount(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min) throw new ConfigError(`${name} must be a number >= ${min}, not ${text}`);
  return value;
}

export function parseBounded(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^[0-9]{1,10}$/.test(text) || value < min || value > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not ${text}`);
  return value;
}

function parseWhole(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${name} must be a whole number >= 1, not ${text}`);
  return value;
}

export function parseFlag(name: string, text: string): boolean {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new ConfigError(`${name} must be true or false, not ${text}`);
}
