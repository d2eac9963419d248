/**
 * The text forms of `timestamp` and `date` property values. A timestamp is written
 * `YYYY-MM-DDTHH:MM:SS[.f{1,3}][Z|±HH:MM|±HHMM|±HH]` (no zone means UTC), years 0001 to 9999, and kept as
 * milliseconds since the epoch; it is read back as `YYYY-MM-DDTHH:MM:SS.sss+00:00`. A date is `YYYY-MM-DD`,
 * years 0001 to 9999, kept as written.
 */

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Milliseconds of a UTC calendar time; Date.UTC would read years 0 to 99 as 1900 to 1999. */
function utcMillis(year: number, month: number, day: number, h = 0, m = 0, s = 0, ms = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, m, s, ms);
  return d.getTime();
}

function validCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const d = new Date(utcMillis(year, month, day));
  return d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** Milliseconds since the epoch, or undefined when the text is not a timestamp in the accepted form. */
export function parseTimestamp(text: string): number | undefined {
  const m = TIMESTAMP.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (!validCalendarDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return undefined;
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0'));
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return utcMillis(year, month, day, hour, minute, second, millis) - offsetMinutes * 60_000;
}

export function isDate(text: string): boolean {
  const m = DATE.exec(text);
  return m !== null && validCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Earliest and latest instants a timestamp can hold: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z. */
export const MIN_TIMESTAMP = utcMillis(1, 1, 1);
export const MAX_TIMESTAMP = utcMillis(9999, 12, 31, 23, 59, 59, 999);

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** The read form of a timestamp: `2024-08-28T13:16:25.228+00:00`. */
export function formatTimestamp(ms: number): string {
  const d = new Date(ms);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}+00:00`
  );
}
