/**
 * Values from one unit to another of the same quantity. The catalog gives each unit's way to its quantity's
 * base unit, `base = (value + offset) * multiplier` (Celsius: offset 273.15, multiplier 1 to kelvin;
 * Fahrenheit: offset 459.67, multiplier 5/9), so a value goes to the base unit and from there to the target.
 */
import type { Unit } from './schema.js';

export interface UnitConversion {
  readonly from: Unit;
  readonly to: Unit;
  /** A value in `from`, in `to`. */
  value(v: number): number;
  /**
   * The same conversion as `value(v) = scale * v + shift`, for what is not a value of the series: a sum of n
   * values converts to `scale * sum + n * shift`, a difference of values by `scale`, a variance by `scale²`.
   */
  readonly scale: number;
  readonly shift: number;
}

export function unitConversion(from: Unit, to: Unit): UnitConversion {
  if (from.externalId === to.externalId) return { from, to, value: (v) => v, scale: 1, shift: 0 };
  const { multiplier: m1, offset: o1 } = from.conversion;
  const { multiplier: m2, offset: o2 } = to.conversion;
  const value = (v: number) => ((v + o1) * m1) / m2 - o2;
  return { from, to, value, scale: m1 / m2, shift: value(0) };
}
