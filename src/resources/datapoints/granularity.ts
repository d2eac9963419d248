/**
 * Aggregate granularities: an optional whole multiple and one of the units the API defines, `s`/`second`,
 * `m`/`minute`, `h`/`hour`, `d`/`day` and `mo`/`month` (`1h`, `15m`, `2day`, `mo`). Seconds and minutes take
 * multiples up to 120, hours, days and months up to 100000. Other spellings are refused with the granularity
 * to send instead: weeks, quarters and years as days and months (`1w` is `7d`), plurals and abbreviations
 * as the unit they mean.
 */
import { badRequest } from '../../http/errors.js';

export type GranularityUnit = 's' | 'm' | 'h' | 'd' | 'mo';

export interface Granularity {
  multiple: number;
  unit: GranularityUnit;
}

const UNITS: Record<string, GranularityUnit> = { s: 's', second: 's', m: 'm', minute: 'm', h: 'h', hour: 'h', d: 'd', day: 'd', mo: 'mo', month: 'mo' };

/** Spellings the API does not take, as a multiple of a unit it does. */
const EQUIVALENTS: Record<string, [number, GranularityUnit]> = {
  sec: [1, 's'], seconds: [1, 's'],
  t: [1, 'm'], min: [1, 'm'], minutes: [1, 'm'],
  hours: [1, 'h'],
  days: [1, 'd'],
  w: [7, 'd'], week: [7, 'd'], weeks: [7, 'd'],
  months: [1, 'mo'],
  q: [3, 'mo'], quarter: [3, 'mo'], quarters: [3, 'mo'],
  y: [12, 'mo'], year: [12, 'mo'], years: [12, 'mo'],
};

export const MAX_MULTIPLE: Record<GranularityUnit, number> = { s: 120, m: 120, h: 100_000, d: 100_000, mo: 100_000 };

const SHAPE = /^(\d*)([A-Za-z]+)$/;

function equivalentOf(word: string): readonly [number, GranularityUnit] | undefined {
  const lower = word.toLowerCase();
  return UNITS[lower] ? [1, UNITS[lower]] : EQUIVALENTS[lower];
}

export function parseGranularity(text: string, where: string): Granularity {
  const m = SHAPE.exec(text);
  const multiple = m && m[1] !== '' ? Number(m[1]) : 1;
  const unit = m ? UNITS[m[2]] : undefined;
  if (!m || !unit) {
    const shown = JSON.stringify(text.slice(0, 40));
    const equivalent = m ? equivalentOf(m[2]) : undefined;
    if (equivalent) {
      const [factor, to] = equivalent;
      const n = multiple * factor;
      const send = n <= MAX_MULTIPLE[to] ? `; send "${n}${to}" instead` : `; the longest granularity in ${to} is ${MAX_MULTIPLE[to]}${to}`;
      throw badRequest(`${where}: ${shown} is not a granularity this API takes${send} (units: s, m, h, d, mo, or second, minute, hour, day, month)`);
    }
    throw badRequest(`${where}: ${shown} is not a granularity; use an optional whole number and a unit: s, m, h, d or mo (or second, minute, hour, day, month), for example "1h", "15m", "1mo"`);
  }
  const max = MAX_MULTIPLE[unit];
  if (multiple < 1 || multiple > max) throw badRequest(`${where}: the multiple of "${unit}" must be from 1 to ${max}, got ${m[1]}`);
  return { multiple, unit };
}

/** Whether time zones apply: they align hours and longer; seconds and minutes are the same in every zone. */
export const isZoned = (g: Granularity) => g.unit !== 's' && g.unit !== 'm';
