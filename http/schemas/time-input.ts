// Times on the wire: RFC 3339 (`2026-11-22T10:00:00Z`, offsets allowed) or `YYYY-MM-DD hh:mm:ss` taken
// as UTC. Go clients send the zero time `0001-01-01T00:00:00Z` (or nothing) for "unset"; both mean 0.

import { accept, refuse, type Result } from '../../engine/result.js';
const WITH_ZONE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
const WITHOUT_ZONE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?$/;

/** A time as epoch milliseconds (0 for Go's zero time), or why the text is not one. */
export type TimeParse = Result<number, { code: 'TIME_INVALID'; message: string }>;

export function parseTimeInput(text: string): TimeParse {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.startsWith('0001-01-01')) return accept(0);
  const match = WITH_ZONE.exec(trimmed) ?? WITHOUT_ZONE.exec(trimmed);
  if (!match) return refuse({ code: 'TIME_INVALID', message: 'must be an RFC 3339 time or YYYY-MM-DD hh:mm:ss (UTC)' });
  const [, year, month, day, hour, minute, second, fraction = '', zone = 'Z'] = match;
  const milliseconds = fraction ? Number(fraction.slice(1, 4).padEnd(3, '0')) : 0;
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), milliseconds);
  const check = new Date(utc);
  // Date.UTC rolls 2026-02-30 over into March; a real calendar date survives the round trip.
  if (check.getUTCFullYear() !== Number(year) || check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day)
    || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) {
    return refuse({ code: 'TIME_INVALID', message: 'is not a real date and time' });
  }
  const offsetMinutes = zone.toUpperCase() === 'Z' ? 0 : zoneMinutes(zone);
  return accept(utc - offsetMinutes * 60_000);
}

function zoneMinutes(zone: string): number {
  const sign = zone.startsWith('-') ? -1 : 1;
  const [hours, minutes] = zone.slice(1).split(':').map(Number) as [number, number];
  return sign * (hours * 60 + minutes);
}
