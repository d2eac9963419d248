/**
 * `targetUnit` / `targetUnitSystem` on data point reads: the values of a series whose `unitExternalId` is a
 * unit of the catalog come back in another unit of the same quantity, and the response item names that unit.
 * Aggregates are those of the converted values, so each converts by what it is (RULES): a value, a sum of
 * values (which needs the count of its values when the conversion has an offset), a difference of values,
 * a variance, or no value at all (counts and durations).
 */
import { badRequest, formatPath } from '../../http/errors.js';
import { requireUnit, unitCatalog } from '../units/catalog.js';
import { unitConversion, type UnitConversion } from '../units/conversion.js';
import type { Unit, UnitSystem } from '../units/schema.js';
import type { AggregateValue } from './aggregates.js';
import type { AggregateBucket } from './aggregate-query.js';
import type { AggregateName } from './schema.js';
import { seriesLabel, type SeriesInfo } from './series-lookup.js';

type Path = Array<string | number>;

export interface UnitTarget {
  targetUnit?: string;
  targetUnitSystem?: string;
}

/**
 * The target of one list query: the two fields are one setting in two forms, so a query that gives either
 * replaces both of the request's defaults (an item's targetUnitSystem is not refused for a top-level targetUnit).
 */
export function unitTargetOf(own: UnitTarget, defaults: UnitTarget): UnitTarget {
  const from = own.targetUnit !== undefined || own.targetUnitSystem !== undefined ? own : defaults;
  return { targetUnit: from.targetUnit, targetUnitSystem: from.targetUnitSystem };
}

/** What a query asks for: a unit, or the unit a system gives the series' quantity. */
export type Target = { unit: Unit } | { system: UnitSystem };

/**
 * The target a query gives (undefined for none), checked against the catalog before any series is read: a
 * 400 naming the place for both forms at once, an unknown unit or an unknown unit system.
 */
export function parseTarget(q: UnitTarget, path: Path): Target | undefined {
  if (q.targetUnit !== undefined && q.targetUnitSystem !== undefined) {
    throw badRequest(`${formatPath(path.length ? path : ['targetUnit'])}: give targetUnit or targetUnitSystem, not both`);
  }
  if (q.targetUnit !== undefined) return { unit: requireUnit(q.targetUnit, [...path, 'targetUnit']) };
  if (q.targetUnitSystem === undefined) return undefined;
  const system = unitCatalog.system(q.targetUnitSystem);
  if (!system) {
    const known = unitCatalog.systems.map((u) => u.name).join(', ');
    throw badRequest(`${formatPath([...path, 'targetUnitSystem'])}: ${JSON.stringify(q.targetUnitSystem)} is not a unit system of the units catalog (known: ${known})`);
  }
  return { system };
}

/**
 * The conversion of a series' values to the target; a 400 naming the place when there is none: a series
 * holding strings or without a catalog unit, a unit of another quantity, a system without a unit for the
 * series' quantity.
 */
export function targetConversion(t: Target, s: SeriesInfo, path: Path): UnitConversion {
  const at = formatPath([...path, 'unit' in t ? 'targetUnit' : 'targetUnitSystem']);
  const series = seriesLabel(s);
  if (s.isString) throw badRequest(`${at}: ${series} holds strings; only numeric values can be converted`);
  if (s.unitExternalId === null) throw badRequest(`${at}: ${series} has no unitExternalId, so its values have no unit to convert from`);
  const from = unitCatalog.unit(s.unitExternalId);
  if (!from) throw badRequest(`${at}: the unitExternalId of ${series}, ${JSON.stringify(s.unitExternalId)}, is not in the units catalog; its values cannot be converted`);
  if ('unit' in t) {
    if (t.unit.quantity !== from.quantity) {
      throw badRequest(`${at}: ${t.unit.externalId} measures ${t.unit.quantity}, and ${series} is in ${from.externalId} (${from.quantity})`);
    }
    return unitConversion(from, t.unit);
  }
  const to = unitCatalog.systemUnit(t.system, from.quantity);
  if (!to) throw badRequest(`${at}: the unit system ${t.system.name} has no unit for ${from.quantity}, the quantity of ${series} (${from.externalId})`);
  return unitConversion(from, to);
}

/** The series fields of a response item in the target unit: its unitExternalId, and no free-text unit once converted. */
export function convertHeader(head: Record<string, unknown>, c: UnitConversion): void {
  head.unitExternalId = c.to.externalId;
  if (c.to.externalId !== c.from.externalId) delete head.unit;
}

/** With `value(v) = scale * v + shift`: value `value(x)`, sum `sum(x, count)`, difference `scale * x`, variance `scale² * x`. */
type Rule = 'value' | 'point' | 'sum' | 'difference' | 'variance' | 'none';

const RULES: Readonly<Record<AggregateName, Rule>> = {
  average: 'value',
  max: 'value',
  min: 'value',
  interpolation: 'value',
  stepInterpolation: 'value',
  maxDatapoint: 'point',
  minDatapoint: 'point',
  sum: 'sum',
  totalVariation: 'difference',
  continuousVariance: 'variance',
  discreteVariance: 'variance',
  count: 'none',
  countGood: 'none',
  countUncertain: 'none',
  countBad: 'none',
  durationGood: 'none',
  durationUncertain: 'none',
  durationBad: 'none',
};

/** The aggregates to compute for the requested ones: a sum with a shift needs the count of its values. */
export function aggregatesToRead(requested: readonly AggregateName[], c: UnitConversion | undefined): readonly AggregateName[] {
  return c && c.shift !== 0 && requested.includes('sum') && !requested.includes('count') ? [...requested, 'count'] : requested;
}

/** A bucket of `aggregatesToRead(requested, c)` as the requested aggregates in the target unit. */
export function convertBucket(bucket: AggregateBucket, requested: readonly AggregateName[], c: UnitConversion): AggregateBucket {
  const count = bucket.count as number | undefined;
  for (const name of Object.keys(bucket) as Array<AggregateName | 'timestamp'>) {
    if (name === 'timestamp') continue;
    const v = bucket[name] as AggregateValue;
    switch (RULES[name]) {
      case 'value':
        bucket[name] = c.value(v as number);
        break;
      case 'point': {
        const p = v as Exclude<AggregateValue, number>;
        bucket[name] = { ...p, value: c.value(p.value) };
        break;
      }
      case 'sum':
        bucket[name] = c.sum(v as number, count ?? 0);
        break;
      case 'difference':
        bucket[name] = c.scale * (v as number);
        break;
      case 'variance':
        bucket[name] = c.scale * c.scale * (v as number);
        break;
      case 'none':
        break;
    }
  }
  if (!requested.includes('count')) delete bucket.count;
  return bucket;
}
