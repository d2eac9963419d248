/**
 * Values from one unit to another of the same quantity. The catalog gives each unit's way to its quantity's
 * base unit, `base = (value + offset) * multiplier` (Celsius: offset 273.15, multiplier 1 to kelvin;
 * Fahrenheit: offset 459.67, multiplier 5/9).
 *
 * Going through the base unit in floating point rounds at every step, and the catalog's factors are
 * themselves rounded (5/9 is written 0.5555555555555556), so 100 °C came out as 211.99999999999994 °F.
 * Instead each factor is read as the fraction it stands for, the simplest one that rounds to it (5/9,
 * 5463/20 for 273.15), and the two steps are composed exactly into one `value = (v * a + b) / d` with whole
 * numbers a, b, d. When they fit in a double's 53 bits, a whole-number value converts with a single
 * rounding, at the division: the nearest double to the exact answer (212). Factors that are no short
 * fraction (most products of other factors) compose into a multiplier and an offset in floating point.
 */
import type { Unit } from './schema.js';

export interface UnitConversion {
  readonly from: Unit;
  readonly to: Unit;
  /** A value in `from`, in `to`. */
  value(v: number): number;
  /** A sum of `n` values in `from`, in `to`. */
  sum(total: number, n: number): number;
  /**
   * The same conversion as `value(v) = scale * v + shift`: a difference of values converts by `scale`, a
   * variance by `scale²`.
   */
  readonly scale: number;
  readonly shift: number;
}

/** A fraction n/d with d > 0, in lowest terms. */
interface Fraction {
  n: bigint;
  d: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function fraction(n: bigint, d: bigint): Fraction {
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
}

const times = (x: Fraction, y: Fraction) => fraction(x.n * y.n, x.d * y.d);
const over = (x: Fraction, y: Fraction) => fraction(x.n * y.d, x.d * y.n);
const plus = (x: Fraction, y: Fraction) => fraction(x.n * y.d + y.n * x.d, x.d * y.d);
const minus = (x: Fraction, y: Fraction) => plus(x, { n: -y.n, d: y.d });

const bits = new BigUint64Array(1);
const float = new Float64Array(bits.buffer);

/** The exact value of a finite double. */
function exactly(x: number): Fraction {
  float[0] = x;
  const b = bits[0];
  const biased = Number((b >> 52n) & 0x7ffn);
  let mantissa = b & ((1n << 52n) - 1n);
  if (biased !== 0) mantissa |= 1n << 52n;
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  const n = b >> 63n ? -mantissa : mantissa;
  return exponent >= 0 ? fraction(n << BigInt(exponent), 1n) : fraction(n, 1n << BigInt(-exponent));
}

/** The double next to a positive finite double, above or below. */
function neighbour(x: number, step: 1n | -1n): number {
  float[0] = x;
  bits[0] += step;
  return float[0];
}

/** The fraction with the least denominator strictly between lo and hi (0 <= lo < hi; hi undefined: no bound). */
function simplestBetween(lo: Fraction, hi: Fraction | undefined): Fraction {
  const whole = lo.n / lo.d;
  if (hi === undefined || (whole + 1n) * hi.d < hi.n) return { n: whole + 1n, d: 1n };
  // Both bounds lie in [whole, whole + 1]: the answer is whole + 1/y, y the simplest between the reciprocals.
  const loRest = lo.n - whole * lo.d;
  const y = simplestBetween({ n: hi.d, d: hi.n - whole * hi.d }, loRest === 0n ? undefined : { n: lo.d, d: loRest });
  return { n: whole * y.n + y.d, d: y.n };
}

/** The fraction a catalog factor stands for: the simplest that rounds to it (5/9 for 0.5555555555555556). */
function intended(x: number): Fraction {
  if (x === 0) return { n: 0n, d: 1n };
  if (x < 0) {
    const f = intended(-x);
    return { n: -f.n, d: f.d };
  }
  // Every number between the midpoints to the neighbouring doubles rounds to x.
  const half = (y: number) => times(exactly(y), { n: 1n, d: 2n });
  const up = neighbour(x, 1n);
  return simplestBetween(plus(half(neighbour(x, -1n)), half(x)), Number.isFinite(up) ? plus(half(x), half(up)) : undefined);
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const safe = (n: bigint) => n <= SAFE && n >= -SAFE;

const IDENTITY = { value: (v: number) => v, sum: (total: number) => total, scale: 1, shift: 0 };

/** Conversions by unit: the catalog's units live as long as the server, and a conversion never changes. */
const conversions = new WeakMap<Unit, WeakMap<Unit, UnitConversion>>();

export function unitConversion(from: Unit, to: Unit): UnitConversion {
  let byTarget = conversions.get(from);
  if (!byTarget) conversions.set(from, (byTarget = new WeakMap()));
  let c = byTarget.get(to);
  if (!c) byTarget.set(to, (c = compose(from, to)));
  return c;
}

function compose(from: Unit, to: Unit): UnitConversion {
  if (from.externalId === to.externalId) return { from, to, ...IDENTITY };
  const m1 = intended(from.conversion.multiplier);
  const m2 = intended(to.conversion.multiplier);
  // value = v * s + t, with s = m1 / m2 and t = o1 * s - o2.
  const s = over(m1, m2);
  const t = minus(times(intended(from.conversion.offset), s), intended(to.conversion.offset));
  const d = (s.d / gcd(s.d, t.d)) * t.d;
  const a = s.n * (d / s.d);
  const b = t.n * (d / t.d);
  const scale = Number(s.n) / Number(s.d);
  const shift = Number(t.n) / Number(t.d);
  const value = (v: number) => v * scale + shift;
  const sum = (total: number, n: number) => total * scale + n * shift;
  if (!(safe(a) && safe(b) && safe(d))) return { from, to, value, sum, scale, shift };
  const [A, B, D] = [Number(a), Number(b), Number(d)];
  // A huge value (a Bad point may carry any number) can overflow v * A where v * scale does not.
  return {
    from,
    to,
    value: (v) => {
      const exact = (v * A + B) / D;
      return Number.isFinite(exact) ? exact : value(v);
    },
    sum: (total, n) => {
      const exact = (total * A + n * B) / D;
      return Number.isFinite(exact) ? exact : sum(total, n);
    },
    scale,
    shift,
  };
}
