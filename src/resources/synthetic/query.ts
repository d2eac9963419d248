/**
 * Synthetic time series queries (`POST /timeseries/synthetic/query`): each item's expression is parsed
 * (expression.ts), its time series are read (raw points, or aggregates of them; in their own unit or in the
 * one asked for), and the expression is evaluated (evaluate.ts) at every timestamp where one of them has a
 * point and all of them have a value. A series has a value between its first and its last point: at its
 * points, and between two of them by linear interpolation (a step series, and a string series, keeps the
 * earlier value). Nothing is extrapolated. Every item is checked, and every series resolved, before any is
 * read; all of them read one snapshot of the store.
 */
import { ApiError, badRequest, formatPath, missingItems } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { refKey, type Ref } from '../../query/refs.js';
import type { UnitConversion } from '../units/conversion.js';
import { aggregateSeries } from '../datapoints/aggregate-query.js';
import { alignedGrid, bucketGrid, fixedLength } from '../datapoints/bucket-grid.js';
import { DEFAULT_TREATMENT } from '../datapoints/bucket-walker.js';
import { parseGranularity, type Granularity } from '../datapoints/granularity.js';
import { rawSeries } from '../datapoints/raw-query.js';
import type { AggregateName } from '../datapoints/schema.js';
import { findSeries, seriesLabel, type SeriesInfo } from '../datapoints/series-lookup.js';
import { parseTime } from '../../query/time-spec.js';
import { parseTimeZone, UTC, type Zone } from '../datapoints/time-zone.js';
import { aggregatesToRead, convertBucket, parseTarget, targetConversion, type Target } from '../datapoints/units.js';
import { evaluate, type Column } from './evaluate.js';
import { parseExpression, type Node, type SeriesInput } from './expression.js';
import { SYNTHETIC_LIMITS, type SyntheticQueryBody } from './schema.js';

/** The aggregates a time series reference may ask for, by the names expressions give them (any letter case). */
const AGGREGATES: Readonly<Record<string, AggregateName>> = {
  average: 'average',
  avg: 'average',
  max: 'max',
  min: 'min',
  count: 'count',
  sum: 'sum',
  interpolation: 'interpolation',
  stepinterpolation: 'stepInterpolation',
  totalvariation: 'totalVariation',
  continuousvariance: 'continuousVariance',
  discretevariance: 'discreteVariance',
};

interface PlannedInput {
  ref: Ref;
  where: string;
  aggregate?: { name: AggregateName; granularity: Granularity; alignment?: number };
  target?: Target;
}

interface Planned {
  root: Node;
  inputs: PlannedInput[];
  start: number;
  end: number;
  limit: number;
  zone: Zone;
}

/** Runs `fn`, its refusals prefixed with `where` (a place in an expression). */
function within<T>(where: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.status, `${where}: ${error.message}`, error.extras);
    throw error;
  }
}

function planInput(input: SeriesInput, where: string): PlannedInput {
  const at = `${where} at position ${input.at}`;
  const out: PlannedInput = { ref: input.ref, where: at };
  if (input.aggregate !== undefined) {
    const name = Object.hasOwn(AGGREGATES, input.aggregate.toLowerCase()) ? AGGREGATES[input.aggregate.toLowerCase()] : undefined;
    if (!name) throw badRequest(`${at}: ${JSON.stringify(input.aggregate)} is not an aggregate of synthetic time series (known: ${Object.keys(AGGREGATES).join(', ')})`);
    const granularity = parseGranularity(input.granularity!, `${at}: granularity`);
    if (input.alignment !== undefined && fixedLength(granularity) === undefined) {
      throw badRequest(`${at}: alignment applies to granularities in seconds, minutes, hours and days, not to months`);
    }
    out.aggregate = { name, granularity, ...(input.alignment !== undefined ? { alignment: input.alignment } : {}) };
  }
  const target = within(at, () => parseTarget({ targetUnit: input.targetUnit, targetUnitSystem: input.targetUnitSystem }, []));
  if (target) out.target = target;
  return out;
}

function plan(body: SyntheticQueryBody, now: number): Planned[] {
  return body.items.map((item, i) => {
    const where = formatPath(['items', i]);
    const { root, inputs } = parseExpression(item.expression, `${where}.expression`);
    const start = parseTime(item.start ?? 0, now, `${where}.start`);
    const end = parseTime(item.end ?? 'now', now, `${where}.end`);
    if (end <= start) throw badRequest(`${where}: end (${end}) must be after start (${start})`);
    const zone = item.timeZone === undefined ? UTC : parseTimeZone(item.timeZone, `${where}.timeZone`);
    return { root, inputs: inputs.map((input) => planInput(input, `${where}.expression`)), start, end, limit: item.limit ?? SYNTHETIC_LIMITS.defaultLimit, zone };
  });
}

/** One input's points: timestamps ascending, their values; which of them are outputs (not outside the range). */
interface Points {
  ts: number[];
  values: Array<number | string>;
  /** Points before `from` or at or after `end`, there only to interpolate between. */
  outside: boolean[];
  step: boolean;
}

interface Read {
  series: SeriesInfo;
  conversion?: UnitConversion;
}

/** The points of one input from `from` on, `limit` of them at most besides the ones just outside. */
async function readInput(services: Services, projectId: number, p: Planned, input: PlannedInput, read: Read, from: number, limit: number): Promise<Points> {
  const { series: s, conversion } = read;
  if (input.aggregate) {
    const { name, granularity, alignment } = input.aggregate;
    const grid = alignment === undefined ? bucketGrid(granularity, p.zone, from, p.end) : alignedGrid(granularity, alignment, from, p.end);
    const aggregates = aggregatesToRead([name], conversion);
    const result = await aggregateSeries(services.db, projectId, s.id, { grid, aggregates, treatment: DEFAULT_TREATMENT, isStep: s.isStep, includeStatus: false, limit, resumed: from > p.start });
    const buckets = result.buckets.map((b) => (conversion ? convertBucket(b, [name], conversion) : b)).filter((b) => typeof b[name] === 'number');
    return { ts: buckets.map((b) => b.timestamp), values: buckets.map((b) => b[name] as number), outside: buckets.map(() => false), step: s.isStep };
  }
  const { points } = await rawSeries(services.db, projectId, s.id, {
    start: from,
    end: p.end,
    limit,
    treatment: DEFAULT_TREATMENT,
    includeStatus: false,
    includeOutsidePoints: true,
    convert: conversion?.value,
  });
  return {
    ts: points.map((q) => q.timestamp),
    values: points.map((q) => q.value as number | string),
    outside: points.map((q) => q.timestamp < from || q.timestamp >= p.end),
    step: s.isStep || s.isString,
  };
}

/** Where an input starts to have a value: undefined when it has none in the range. */
function coverageStart(points: Points, from: number): number | undefined {
  if (points.ts.length === 0) return undefined;
  return points.outside[0] && points.ts[0] < from ? (points.ts.length > 1 ? from : undefined) : points.ts[0];
}

/** The input's values at the timestamps `at` (ascending), undefined where it has none. */
function sample(points: Points, at: readonly number[]): Array<number | string | undefined> {
  const out = new Array<number | string | undefined>(at.length);
  const { ts, values } = points;
  let j = 0;
  for (let i = 0; i < at.length; i++) {
    const t = at[i];
    while (j + 1 < ts.length && ts[j + 1] <= t) j++;
    if (ts.length === 0 || ts[j] > t) continue;
    if (ts[j] === t) out[i] = values[j];
    else if (j + 1 < ts.length) {
      const a = values[j];
      const b = values[j + 1];
      out[i] = points.step || typeof a !== 'number' || typeof b !== 'number' ? a : a + ((b - a) * (t - ts[j])) / (ts[j + 1] - ts[j]);
    }
  }
  return out;
}

/** The output points of one item. */
async function runItem(services: Services, projectId: number, p: Planned, reads: Read[]): Promise<Array<{ timestamp: number; value?: number; error?: string }>> {
  if (p.inputs.length === 0) return [];
  // Each input from the first time all of them have a value, read a little past the limit: an output
  // timestamp can lack a value of an input only where that input's values begin or end.
  const firsts = await Promise.all(p.inputs.map(async (input, k) => coverageStart(await readInput(services, projectId, p, input, reads[k], p.start, 1), p.start)));
  if (firsts.some((f) => f === undefined)) return [];
  const from = Math.max(...(firsts as number[]));
  const enough = p.limit + p.inputs.length + 1;
  const all: Points[] = [];
  for (const [k, input] of p.inputs.entries()) all.push(await readInput(services, projectId, p, input, reads[k], from, enough));
  const candidates = [...new Set(all.flatMap((pts) => pts.ts.filter((_, i) => !pts.outside[i])))].sort((a, b) => a - b);
  const sampled = all.map((pts) => sample(pts, candidates));
  const at: number[] = [];
  const keep: number[] = [];
  for (let i = 0; i < candidates.length && at.length < p.limit; i++) {
    if (sampled.every((col) => col[i] !== undefined)) {
      at.push(candidates[i]);
      keep.push(i);
    }
  }
  const columns: Column[] = sampled.map((col, k) => {
    const values = keep.map((i) => col[i]!);
    return reads[k].series.isString && !p.inputs[k].aggregate
      ? { num: null, str: values as string[], err: null }
      : { num: Float64Array.from(values as number[]), str: null, err: null };
  });
  const out = await evaluate(p.root, columns, at.length);
  return at.map((timestamp, i) => {
    const error = out.err?.[i];
    return error === undefined ? { timestamp, value: out.num![i] } : { timestamp, error };
  });
}

export async function syntheticQuery(services: Services, projectId: number, body: SyntheticQueryBody) {
  const planned = plan(body, services.now());
  return services.db.snapshot(async (db) => {
    const scoped = { ...services, db };
    const refs = [...new Map(planned.flatMap((p) => p.inputs.map((i) => [refKey(i.ref), i.ref] as const))).values()];
    const found = await findSeries(db, projectId, refs, services.access);
    const missing = refs.filter((_, k) => found[k] === undefined);
    if (missing.length) throw missingItems(missing);
    const byKey = new Map(refs.map((r, k) => [refKey(r), found[k]!]));
    const items = [];
    for (const p of planned) {
      const reads = p.inputs.map((input) => {
        const series = byKey.get(refKey(input.ref))!;
        if (input.aggregate && series.isString) throw badRequest(`${input.where}: ${seriesLabel(series)} holds strings; aggregates are available for numeric time series only`);
        return { series, ...(input.target ? { conversion: within(input.where, () => targetConversion(input.target!, series, [])) } : {}) };
      });
      items.push({ isString: false, datapoints: await runItem(scoped, projectId, p, reads) });
    }
    return { items };
  });
}
