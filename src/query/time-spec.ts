/**
 * Points in time as requests give them: milliseconds since the epoch, or text relative to the request's
 * "now": `now`, `3d-ago`, `15m-ahead` (units s, m, h, d, w); and lengths of time such as `90s` or `2h`.
 */
import { badRequest } from '../http/errors.js';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const RELATIVE = /^(\d{1,12})(s|m|h|d|w)-(ago|ahead)$/;
const DURATION = /^(\d{1,12})(s|m|h|d|w)$/;
const SAFE = Number.MAX_SAFE_INTEGER;

/** Milliseconds since the epoch for an integer or relative time; `where` names the field in a 400. */
export function parseTime(value: unknown, now: number, where: string): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || Math.abs(value) > SAFE) throw badRequest(`${where}: expected an integer timestamp in milliseconds, got ${value}`);
    return value;
  }
  if (typeof value !== 'string') {
    throw badRequest(`${where}: expected a timestamp in milliseconds or a time such as "now" or "2d-ago", got ${value === null ? 'null' : typeof value}`);
  }
  const text = value.trim();
  if (text === 'now') return now;
  if (/^-?\d{1,16}$/.test(text)) return Number(text);
  const m = RELATIVE.exec(text);
  if (!m) throw badRequest(`${where}: ${JSON.stringify(value.slice(0, 40))} is not a time; use milliseconds since the epoch, "now", or <number><s|m|h|d|w>-ago (or -ahead), such as "2d-ago"`);
  const offset = Number(m[1]) * UNIT_MS[m[2]];
  return m[3] === 'ago' ? now - offset : now + offset;
}

/**
 * A length of time in milliseconds from text such as `90s`, `15m`, `2h`, `1d` or `1w` (a positive whole number
 * and a unit); `where` names the field in a 400. Lengths beyond `longest` count as `longest`.
 */
export function parseDuration(value: string, longest: number, where: string): number {
  const m = DURATION.exec(value);
  if (!m || Number(m[1]) === 0) {
    throw badRequest(`${where}: ${JSON.stringify(value.slice(0, 40))} is not a length of time; use a positive whole number and a unit (s, m, h, d or w), such as "30m" or "2h"`);
  }
  return Math.min(longest, Number(m[1]) * UNIT_MS[m[2]]);
}
