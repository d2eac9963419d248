/**
 * Retrieving data points: raw points and aggregates for up to 100 queries (`/timeseries/data/list`), and the
 * latest point of up to 100 series (`/timeseries/data/latest`). Every query is checked before any is run;
 * all of them read one snapshot of the store.
 */
import { badRequest, missingItems } from '../../http/errors.js';
import { EncodedBody, JsonText } from '../../http/json-text.js';
import { encodeDatapointList, PROTOBUF_TYPE } from './protobuf.js';
import type { Services } from '../../http/services.js';
import { checkRef, type Ref } from '../../query/refs.js';
import { aggregateSeries } from './aggregate-query.js';
import { bucketGrid } from './bucket-grid.js';
import { parseGranularity, type Granularity } from './granularity.js';
import { DATAPOINT_LIMITS as L } from './limits.js';
import { latestPoints, rawSeries, rawSeriesJson } from './raw-query.js';
import type { AggregateName, LatestDatapointsBody, ListDatapointsBody, ListQueryItem } from './schema.js';
import { findSeries, seriesHeader, seriesLabel, type SeriesInfo } from './series-lookup.js';
import { parseDuration, parseTime } from '../../query/time-spec.js';
import { parseTimeZone, UTC, type Zone } from './time-zone.js';
import { treatmentOf } from './treatment.js';
import type { UnitConversion } from '../units/conversion.js';
import { aggregatesToRead, convertBucket, convertHeader, parseTarget, targetConversion, unitTargetOf, type Target } from './units.js';

type Query = Omit<ListQueryItem, 'id' | 'externalId' | 'instanceId'>;

interface Planned {
  index: number;
  ref: Ref;
  q: Query;
  start: number;
  end: number;
  limit: number;
  granularity?: Granularity;
  zone: Zone;
  /** Gap filling: the longest gap (ms) to interpolate across. */
  fill?: number;
  /** Where this page begins (from the cursor), if not at `start`. */
  resume?: number;
  /** What a cursor of this query is bound to. */
  binding: unknown;
  /** The unit asked for (`targetUnit`, `targetUnitSystem`). */
  target?: Target;
}

/**
 * Runs `fn` with the request's services bound to one snapshot of the store: a transaction that only reads
 * (or the one the services are already in).
 */
function inSnapshot<T>(services: Services, fn: (services: Services) => Promise<T>): Promise<T> {
  return services.db.snapshot((db) => fn({ ...services, db }));
}

function plan(services: Services, body: ListDatapointsBody, now: number): Planned[] {
  const { items, ignoreUnknownIds: _ignore, ...defaults } = body;
  parseTarget(defaults, []);
  return items.map((item, index) => {
    const where = `items[${index}]`;
    const { id, externalId, instanceId, ...own } = item;
    const ref = checkRef({ id, externalId, instanceId }, ['items', index], true);
    const q: Query = { ...defaults, ...own, ...unitTargetOf(own, defaults) };
    const target = parseTarget(q, ['items', index]);
    if (q.aggregates && q.granularity === undefined) throw badRequest(`${where}: aggregates need a granularity (for example "1h")`);
    if (q.granularity !== undefined && !q.aggregates) throw badRequest(`${where}: granularity is given without aggregates; give aggregates too, or leave granularity out for raw points`);
    const granularity = q.granularity === undefined ? undefined : parseGranularity(q.granularity, `${where}.granularity`);
    const zone = q.timeZone === undefined ? UTC : parseTimeZone(q.timeZone, `${where}.timeZone`);
    if (q.fill && !q.aggregates) throw badRequest(`${where}: fill applies to aggregates; give aggregates and a granularity, or leave fill out`);
    const fill = q.fill && parseDuration(q.fill.limit, L.maxTimestamp - L.minTimestamp, `${where}.fill.limit`);
    if (q.includeOutsidePoints && q.aggregates) throw badRequest(`${where}: includeOutsidePoints applies to raw points only, not to aggregates`);
    const cursor = q.cursor ?? undefined;
    if (q.includeOutsidePoints && cursor !== undefined) throw badRequest(`${where}: includeOutsidePoints cannot be combined with a cursor`);
    const limit = q.limit ?? L.defaultLimit;
    if (q.aggregates && limit > L.aggregatePoints) throw badRequest(`${where}.limit: at most ${L.aggregatePoints} for aggregates, got ${limit}`);
    const start = parseTime(q.start ?? 0, now, `${where}.start`);
    const end = parseTime(q.end ?? 'now', now, `${where}.end`);
    if (end <= start) throw badRequest(`${where}: end (${end}) must be after start (${start})`);
    // A cursor is bound to the series and to what its points are (raw or which aggregates, granularity, time
    // zone, unit, status options), not to the window: clients that page move start past the last point
    // they got (and may narrow end) and send the cursor along, as the official Python SDK does. The next page
    // starts at the later of the cursor's position and start, and ends at the request's end.
    const { cursor: _cursor, limit: _limit, start: _start, end: _end, includeOutsidePoints: _outside, ...bound } = q;
    const binding = { op: 'datapoints/list', ref, ...bound };
    const resume = cursor === undefined ? undefined : decodeResume(services, cursor, binding, `${where}.cursor`);
    return { index, ref, q, start, end, limit, granularity, zone, fill, resume, binding, target };
  });
}

function decodeResume(services: Services, cursor: string, binding: unknown, where: string): number {
  let state: unknown;
  try {
    state = services.cursors.decode(cursor, binding);
  } catch (err) {
    throw badRequest(`${where}: ${(err as Error).message.replace(/^cursor: /, '')}`);
  }
  const t = (state as { t?: unknown } | null)?.t;
  if (typeof t !== 'number' || !Number.isSafeInteger(t)) throw badRequest(`${where}: not a cursor issued by this server`);
  return t;
}

function checkTotals(planned: Planned[]): void {
  let raw = 0;
  let aggregated = 0;
  for (const p of planned) {
    if (p.q.aggregates) aggregated += p.limit;
    else raw += p.limit;
  }
  if (raw > L.rawPoints) throw badRequest(`items: the limits of the raw queries add up to ${raw}; at most ${L.rawPoints} raw data points per request`);
  if (aggregated > L.aggregatePoints) {
    throw badRequest(`items: the limits of the aggregate queries add up to ${aggregated}; at most ${L.aggregatePoints} aggregates per request`);
  }
}

async function resolve(services: Services, projectId: number, refs: Ref[], ignoreUnknownIds: boolean): Promise<Array<SeriesInfo | undefined>> {
  const series = await findSeries(services.db, projectId, refs, services.access);
  const missing = refs.filter((_, i) => series[i] === undefined);
  if (missing.length && !ignoreUnknownIds) throw missingItems(missing);
  return series;
}

/**
 * One response item: the series fields, then `datapoints` (objects, or the JSON text of the array), then
 * `nextCursor`; for aggregates, the ones asked for (the binary form gives each of them in every bucket).
 */
interface Result {
  kind: 'numeric' | 'string' | 'aggregate';
  head: Record<string, unknown>;
  datapoints: unknown[] | string;
  nextCursor?: string;
  aggregates?: readonly AggregateName[];
}

/**
 * The response as JSON text, rendered without making an object per point (raw points can be 100,000 per
 * request; JSON.stringify of them as objects takes longer than reading them): the same bytes as
 * JSON.stringify of `listDatapointsObject`.
 */
export async function listDatapoints(services: Services, projectId: number, body: ListDatapointsBody): Promise<JsonText> {
  const items = (await runList(services, projectId, body, true)).map((r) => {
    const head = JSON.stringify(r.head);
    const points = typeof r.datapoints === 'string' ? r.datapoints : JSON.stringify(r.datapoints);
    const cursor = r.nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(r.nextCursor)}`;
    return `${head.slice(0, -1)},"datapoints":${points}${cursor}}`;
  });
  return new JsonText(`{"items":[${items.join(',')}]}`);
}

/** The response of `listDatapoints` as protocol buffers (see protobuf.ts). */
export async function listDatapointsProtobuf(services: Services, projectId: number, body: ListDatapointsBody): Promise<EncodedBody> {
  const items = (await runList(services, projectId, body, false)) as Array<Result & { datapoints: unknown[] }>;
  return new EncodedBody(PROTOBUF_TYPE, encodeDatapointList(items));
}

/** The response of `listDatapoints` as objects (the reference its text is tested against). */
export async function listDatapointsObject(services: Services, projectId: number, body: ListDatapointsBody) {
  const items = (await runList(services, projectId, body, false)).map((r) => {
    const out: Record<string, unknown> = { ...r.head, datapoints: r.datapoints };
    if (r.nextCursor !== undefined) out.nextCursor = r.nextCursor;
    return out;
  });
  return { items };
}

async function runList(services: Services, projectId: number, body: ListDatapointsBody, asText: boolean): Promise<Result[]> {
  const planned = plan(services, body, services.now());
  checkTotals(planned);
  return inSnapshot(services, async (services) => {
    const series = await resolve(services, projectId, planned.map((p) => p.ref), body.ignoreUnknownIds ?? false);
    const conversions = planned.map((p) => {
      const s = series[p.index];
      if (!s) return undefined;
      if (p.q.aggregates && s.isString) throw badRequest(`items[${p.index}]: ${seriesLabel(s)} holds strings; aggregates are available for numeric time series only`);
      return p.target && targetConversion(p.target, s, ['items', p.index]);
    });
    const items: Result[] = [];
    for (const p of planned) {
      const s = series[p.index];
      if (s) items.push(await runQuery(services, projectId, s, p, asText, conversions[p.index]));
    }
    return items;
  });
}

async function runQuery(services: Services, projectId: number, s: SeriesInfo, p: Planned, asText: boolean, unit: UnitConversion | undefined): Promise<Result> {
  const head = seriesHeader(s);
  if (unit) convertHeader(head, unit);
  const kind = p.q.aggregates ? 'aggregate' : s.isString ? 'string' : 'numeric';
  const treatment = treatmentOf(p.q);
  const includeStatus = p.q.includeStatus ?? false;
  const from = p.resume === undefined ? p.start : Math.max(p.resume, p.start);
  let datapoints: unknown[] | string;
  let nextStart: number | undefined;
  if (p.q.aggregates) {
    head.isString = false;
    // No buckets asked for (limit 0), or a cursor already past the window: an empty page, and the last.
    if (p.limit === 0 || from >= p.end) return { kind, head, datapoints: [], aggregates: p.q.aggregates };
    const grid = bucketGrid(p.granularity!, p.zone, from, p.end);
    const aggregates = aggregatesToRead(p.q.aggregates, unit);
    const resumed = from > p.start;
    const result = await aggregateSeries(services.db, projectId, s.id, { grid, aggregates, treatment, isStep: s.isStep, includeStatus, fill: p.fill, limit: p.limit, resumed });
    datapoints = unit ? result.buckets.map((b) => convertBucket(b, p.q.aggregates!, unit)) : result.buckets;
    nextStart = result.nextStart;
  } else {
    const q = { start: from, end: p.end, limit: p.limit, treatment, includeStatus, includeOutsidePoints: p.q.includeOutsidePoints ?? false, convert: unit?.value };
    if (asText) {
      const result = await rawSeriesJson(services.db, projectId, s.id, q);
      datapoints = result.json;
      nextStart = result.nextStart;
    } else {
      const result = await rawSeries(services.db, projectId, s.id, q);
      datapoints = result.points;
      nextStart = result.nextStart;
    }
  }
  const result: Result = { kind, head, datapoints, aggregates: p.q.aggregates };
  if (nextStart !== undefined) result.nextCursor = services.cursors.encode({ t: nextStart }, p.binding);
  return result;
}

export function latestDatapoints(services: Services, projectId: number, body: LatestDatapointsBody): Promise<{ items: Array<Record<string, unknown>> }> {
  const now = services.now();
  const queries = body.items.map((item, i) => {
    const { id, externalId, instanceId, ...q } = item;
    const ref = checkRef({ id, externalId, instanceId }, ['items', i], true);
    const before = parseTime(q.before ?? 'now', now, `items[${i}].before`);
    return { ref, q, before, target: parseTarget(q, ['items', i]) };
  });
  return inSnapshot(services, async (services) => {
    const series = await resolve(
      services,
      projectId,
      queries.map((q) => q.ref),
      body.ignoreUnknownIds ?? false,
    );
    const conversions = series.map((s, i) => {
      const target = queries[i].target;
      return s && target && targetConversion(target, s, ['items', i]);
    });
    const found = queries.flatMap(({ q, before }, i) => {
      const s = series[i];
      if (!s) return [];
      const unit = conversions[i];
      return [{ s, unit, query: { seriesId: s.id, before, treatment: treatmentOf(q), includeStatus: q.includeStatus ?? false, convert: unit?.value } }];
    });
    const points = await latestPoints(services.db, projectId, found.map((f) => f.query));
    const items = found.map(({ s, unit }, i) => {
      const out = seriesHeader(s);
      if (unit) convertHeader(out, unit);
      const point = points[i];
      out.datapoints = point ? [point] : [];
      return out;
    });
    return { items };
  });
}
