// Where operator commands reach a running server: the configured address (a wildcard host is reached
// on loopback) unless `--url` names another, and the headers that carry the master key when one is set.

import type { FolioConfig } from '../server/config.js';

export function serverUrl(config: FolioConfig, override?: string): string {
  if (override !== undefined) return override.replace(/\/$/, '');
  const host = config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`;
}

export function serviceHeaders(config: FolioConfig): Record<string, string> {
  return config.server.secret_key !== '' ? { 'X-svc-key': config.server.secret_key } : {};
}
