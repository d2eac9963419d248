/**
 * Aggregate granularities: an optional whole multiple and a unit, such as `1h`, `15m`, `2day`, `mo` or
 * `3months`. Seconds and minutes take multiples up to 120; hours, days, weeks, months, quarters and years
 * up to 100000.
 */
import { badRequest } from '../../http/errors.js';

export type GranularityUnit = 's' | 'm' | 'h' | 'd' | 'w' | 'mo' | 'q' | 'y';

export interface Granularity {
  multiple: number;
  unit: GranularityUnit;
}

const NAMES: Record<string, GranularityUnit> = {
  s: 's', sec: 's', second: 's', seconds: 's',
  m: 'm', t: 'm', min: 'm', minute: 'm', minutes: 'm',
  h: 'h', hour: 'h', hours: 'h',
  d: 'd', day: 'd', days: 'd',
  w: 'w', week: 'w', weeks: 'w',
  mo: 'mo', month: 'mo', months: 'mo',
  q: 'q', quarter: 'q', quarters: 'q',
  y: 'y', year: 'y', years: 'y',
};

export const MAX_MULTIPLE: Record<GranularityUnit, number> = { s: 120, m: 120, h: 100_000, d: 100_000, w: 100_000, mo: 100_000, q: 100_000, y: 100_000 };

const SHAPE = /^(\d*)([a-z]+)$/;

export function parseGranularity(text: string, where: string): Granularity {
  const m = SHAPE.exec(text.trim().toLowerCase());
  const unit = m ? NAMES[m[2]] : undefined;
  if (!m || !unit) {
    throw badRequest(
      `${where}: ${JSON.stringify(text.slice(0, 40))} is not a granularity; use an optional whole number and a unit: s, m, h, d, w, mo, q or y (for example "1h", "15m", "1mo")`,
    );
  }
  const multiple = m[1] === '' ? 1 : Number(m[1]);
  const max = MAX_MULTIPLE[unit];
  if (multiple < 1 || multiple > max) throw badRequest(`${where}: the multiple of "${unit}" must be from 1 to ${max}, got ${m[1]}`);
  return { multiple, unit };
}

/** Whether time zones apply: they align hours and longer; seconds and minutes are the same in every zone. */
export const isZoned = (g: Granularity) => g.unit !== 's' && g.unit !== 'm';
