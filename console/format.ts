// Amounts and times as the console shows them. Amounts arrive as exact integers in the smallest unit
// (digits, never a double: api.ts parses JSON keeping each number's own text) with a precision beside
// them (100: cents); they are formatted with BigInt and string arithmetic only, so no figure is ever
// rounded. A precision that is a power of ten places a decimal point; any other keeps the integer and
// says so; an unknown one shows the smallest units and says that. Times are shown in the viewer's time
// zone with the UTC instant on hover (the element's title) and in its datetime attribute.

const ZERO_TIME = '0001-01-01T00:00:00Z';
const DIGITS = /^-?\d+$/;

/** The exact digits of an amount from the API (a safe integer number or the text of a larger one). */
export function amountDigits(value: unknown): string {
  if (typeof value === 'string' && DIGITS.test(value)) {
    const trimmed = value.replace(/^(-?)0+(?=\d)/, '$1');
    return trimmed === '-0' ? '0' : trimmed;
  }
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'bigint') return value.toString();
  throw new Error(`not an exact amount: ${String(value)}`);
}

/** The number of decimal places a precision stands for, when it is a power of ten. */
export function decimalPlaces(precision: string): number | undefined {
  return /^10*$/.test(precision) ? precision.length - 1 : undefined;
}

let numberParts: { group: string; decimal: string } | undefined;

/** The viewer's separators (thousands and decimal), from the browser's own number formatting. */
function separators(): { group: string; decimal: string } {
  if (!numberParts) {
    const parts = new Intl.NumberFormat(undefined).formatToParts(1234567.5);
    numberParts = {
      group: parts.find((part) => part.type === 'group')?.value ?? ',',
      decimal: parts.find((part) => part.type === 'decimal')?.value ?? '.',
    };
  }
  return numberParts;
}

function grouped(digits: string): string {
  const { group } = separators();
  let text = '';
  for (let end = digits.length; end > 0; end -= 3) {
    const start = Math.max(0, end - 3);
    text = digits.slice(start, end) + (text === '' ? '' : group + text);
  }
  return text;
}

/**
 * An amount in major units: `123456` at precision `100` is `1,234.56` (every decimal place shown, as a
 * statement does). Without a known precision (undefined) the smallest units are shown as they are.
 */
export function formatAmount(digits: string, precision: string | undefined): string {
  const negative = digits.startsWith('-');
  const magnitude = negative ? digits.slice(1) : digits;
  const sign = negative ? '-' : '';
  const places = precision === undefined ? 0 : decimalPlaces(precision);
  if (places === undefined) return `${sign}${grouped(magnitude)} (÷${precision})`;
  if (places === 0) return sign + grouped(magnitude);
  const padded = magnitude.padStart(places + 1, '0');
  const whole = padded.slice(0, padded.length - places);
  return `${sign}${grouped(whole)}${separators().decimal}${padded.slice(padded.length - places)}`;
}

/**
 * A decimal a person typed (`12.5`, `-3`) in exact smallest units at `precision`, or why not: more
 * decimals than the precision holds is refused, never rounded.
 */
export function parseAmount(text: string, precision: string): { digits: string } | { error: string } {
  const trimmed = text.trim().replace(/[\s,_]/g, '');
  const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(trimmed);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return { error: 'write the amount as digits, with a point for decimals (12.50)' };
  const places = decimalPlaces(precision);
  const fraction = match[3] ?? '';
  if (places === undefined) {
    if (fraction.replace(/0+$/, '') !== '') return { error: `precision ${precision} is not a power of ten: give the amount in the smallest unit` };
    return { digits: amountDigits(`${match[1]}${match[2] || '0'}`) };
  }
  if (fraction.replace(/0+$/, '').length > places) return { error: `at most ${places} decimal place${places === 1 ? '' : 's'} at precision ${precision}` };
  const units = `${match[2] || '0'}${fraction.padEnd(places, '0').slice(0, places)}`;
  return { digits: amountDigits(`${match[1]}${units}`) };
}

/** Whether a time from the API is set (the zero time means unset). */
export function isSet(time: unknown): time is string {
  return typeof time === 'string' && time !== '' && time !== ZERO_TIME && !Number.isNaN(Date.parse(time));
}

const localFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A time in the viewer's zone (to the second; the exact instant is in the title and datetime). */
export function localTime(iso: string): string {
  return localFormat.format(new Date(iso));
}

/** The UTC form shown on hover: the API's own text. */
export function utcTitle(iso: string): string {
  return `UTC: ${iso}`;
}

/** A duration in milliseconds, briefly (`850 ms`, `3.2 s`, `4 min`). */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  if (Math.abs(ms) < 1000) return `${Math.round(ms * 10) / 10} ms`;
  if (Math.abs(ms) < 60_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}

/** A byte count, briefly. */
export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 ** 2) return `${Math.round(count / 102.4) / 10} KiB`;
  return `${Math.round(count / (102.4 * 1024)) / 10} MiB`;
}
