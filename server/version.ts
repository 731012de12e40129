// The version Folio reports in /health and upgrade responses, read from package.json once.

import fs from 'node:fs';

function readVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      const text = fs.readFileSync(new URL(candidate, import.meta.url), 'utf8');
      const parsed = JSON.parse(text) as { name?: string; version?: string };
      if (parsed.name === 'folio' && parsed.version) return parsed.version;
    } catch {
      // try the next location: the source tree and dist/ sit at different depths
    }
  }
  return '0.0.0';
}

export const FOLIO_VERSION = readVersion();
