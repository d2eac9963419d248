/**
 * Points in time as requests give them: milliseconds since the epoch, or text relative to the request's
 * "now": `now`, `3d-ago`, `15m-ahead` (units s, m, h, d, w).
 */
import { badRequest } from '../../http/errors.js';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const RELATIVE = /^(\d{1,12})(s|m|h|d|w)-(ago|ahead)$/;
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
