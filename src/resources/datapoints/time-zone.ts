/**
 * Time zones for aligning aggregates: `UTC`, fixed offsets (`UTC+05:30`, `UTC-08:00`, in steps of 15
 * minutes) and IANA names (`Europe/Oslo`), whose offsets come from the ICU data that Node carries.
 *
 * A zone converts between instants (ms since the epoch) and local wall-clock times expressed the same way
 * ("local ms": the instant the wall-clock reading would be in UTC).
 */
import { badRequest } from '../../http/errors.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

export interface Zone {
  readonly name: string;
  /** Local minus UTC at an instant, in ms. */
  offsetAt(t: number): number;
  /**
   * The instant of a local wall-clock time. A time that occurs twice (clocks set back) gives the earlier
   * instant; a time skipped by a transition gives the instant the clocks jumped over it (so a day that
   * starts inside a gap starts at the transition). `hint` is an offset likely to apply (saves a lookup).
   */
  toUtc(local: number, hint?: number): number;
}

class FixedZone implements Zone {
  constructor(
    readonly name: string,
    private readonly offset: number,
  ) {}
  offsetAt(): number {
    return this.offset;
  }
  toUtc(local: number): number {
    return local - this.offset;
  }
}

/** A stretch of time with one offset, or with one transition inside it. */
type Stretch = number | { at: number; before: number; after: number };

const HALF_WEEK = 302_400_000;

class IanaZone implements Zone {
  private readonly format: Intl.DateTimeFormat;
  /**
   * Offsets by half-week, learnt on first use: asking ICU costs microseconds and bucket grids ask for every
   * bucket. This assumes a half-week holds at most one transition, which holds for the daylight-saving
   * rules in use; two clock changes within three and a half days (a rare historic event) would be missed.
   */
  private readonly stretches = new Map<number, Stretch>();

  constructor(readonly name: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  offsetAt(t: number): number {
    const i = Math.floor(t / HALF_WEEK);
    let s = this.stretches.get(i);
    if (s === undefined) {
      s = this.learn(i * HALF_WEEK);
      if (this.stretches.size > 100_000) this.stretches.clear();
      this.stretches.set(i, s);
    }
    return typeof s === 'number' ? s : t < s.at ? s.before : s.after;
  }

  private learn(a: number): Stretch {
    const before = this.exactOffsetAt(a);
    const after = this.exactOffsetAt(a + HALF_WEEK - 1000);
    if (before === after) return before;
    // The transition: the first whole second whose offset is no longer `before`.
    let lo = a / 1000;
    let hi = (a + HALF_WEEK - 1000) / 1000;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.exactOffsetAt(mid * 1000) === before) lo = mid;
      else hi = mid;
    }
    return { at: hi * 1000, before, after };
  }

  private exactOffsetAt(t: number): number {
    const whole = Math.floor(t / 1000) * 1000;
    const f: Record<string, number> = {};
    for (const p of this.format.formatToParts(whole)) if (p.type !== 'literal') f[p.type] = Number(p.value);
    return Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second) - whole;
  }

  toUtc(local: number, hint?: number): number {
    if (hint !== undefined) {
      const guess = local - hint;
      if (this.offsetAt(guess) === hint && this.offsetAt(guess - DAY) === hint) return guess;
    }
    const before = this.offsetAt(local - DAY);
    const after = this.offsetAt(local + DAY);
    const early = local - before;
    const late = local - after;
    const earlyOk = this.offsetAt(early) === before;
    const lateOk = this.offsetAt(late) === after;
    if (earlyOk && lateOk) return Math.min(early, late);
    if (earlyOk) return early;
    if (lateOk) return late;
    // A skipped wall-clock time: the answer is the transition, the first instant whose offset is `after`.
    let lo = Math.min(early, late);
    let hi = Math.max(early, late);
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.offsetAt(mid) === before) lo = mid;
      else hi = mid;
    }
    return hi;
  }
}

export const UTC: Zone = new FixedZone('UTC', 0);

const FIXED = /^(?:UTC|GMT)([+-])(\d{1,2})(?::?(\d{2}))?$/i;
const cache = new Map<string, Zone>();

/** The zone named by a request, or a 400 naming `where`. */
export function parseTimeZone(name: string, where: string): Zone {
  const known = cache.get(name);
  if (known) return known;
  const zone = resolveZone(name, where);
  if (cache.size > 1000) cache.clear();
  cache.set(name, zone);
  return zone;
}

function resolveZone(name: string, where: string): Zone {
  if (/^(UTC|GMT|Z)$/i.test(name)) return UTC;
  const m = FIXED.exec(name);
  if (m) {
    const hours = Number(m[2]);
    const minutes = m[3] === undefined ? 0 : Number(m[3]);
    if (minutes % 15 !== 0 || minutes >= 60 || hours * 60 + minutes > 14 * 60) {
      throw badRequest(`${where}: ${JSON.stringify(name)} is not a supported offset; use UTC+HH:MM or UTC-HH:MM in steps of 15 minutes, at most 14 hours`);
    }
    const offset = (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes) * MINUTE;
    return offset === 0 ? UTC : new FixedZone(name, offset);
  }
  try {
    return new IanaZone(new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone);
  } catch {
    throw badRequest(`${where}: unknown time zone ${JSON.stringify(name.slice(0, 64))}; use an IANA name such as "Europe/Oslo", "UTC", or an offset such as "UTC+05:30"`);
  }
}
