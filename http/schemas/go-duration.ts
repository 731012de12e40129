// Durations as Go writes them, which Blnk's API takes and answers with (`?threshold=5m`, `"5m0s"`):
// parsed from a sequence of decimal numbers with units (ns, us, µs, ms, s, m, h), and written back the
// way Go's Duration.String() does (`2m0s`, `1h30m0s`, `1.5s`, `500ms`).

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const PART = /([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds of a Go duration, or undefined when the text is not one. */
export function parseGoDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  if (trimmed === '' || trimmed.length > 64) return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < trimmed.length) {
    const match = PART.exec(trimmed);
    if (!match) return undefined;
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number);
  }
  return Number.isFinite(total) ? total : undefined;
}

/** A duration in whole milliseconds as Go's Duration.String() writes it. */
export function formatGoDuration(milliseconds: number): string {
  if (milliseconds === 0) return '0s';
  if (milliseconds < 1_000) return `${milliseconds}ms`;
  const hours = Math.floor(milliseconds / 3_600_000);
  const minutes = Math.floor((milliseconds % 3_600_000) / 60_000);
  const seconds = (milliseconds % 60_000) / 1_000;
  const secondsText = `${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, '')}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}
