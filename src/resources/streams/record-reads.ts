/**
 * Reading records: filter (one page, sorted) and sync (the stream's feed of changes, by cursor), and what
 * they share with aggregate: the containers and properties selected (`sources`), conversion to other units
 * (`targetUnits`), the property types (`includeTyping`), the `lastUpdatedTime` range, and the filter.
 *
 * A read sees the records of its stream as the caller sees the schema: the containers it names must exist in
 * the spaces of the caller's `dataModelsAcl` grants, and be record containers. Records past their stream's
 * retention (`dataDeletedAfter`) are left out at once, whether or not the job that deletes them has run.
 *
 * Sync follows the stream's feed: every write of a record takes the next position of its stream, and a
 * stream's writes become visible in the order of their positions (streams.ts `claimStream`), so a cursor,
 * the position after the last record returned, steps past nothing that commits later. A page shorter than
 * the limit moves the cursor to the stream's position read before the page, past what the filter left out.
 * A deleted record of a mutable stream is a tombstone (`status: "deleted"`, no properties) until the
 * tombstone retention (settings.ts) has passed, which is also how long a cursor lives; a record that leaves
 * an immutable stream at the end of its retention leaves no tombstone. A tombstone keeps the properties its
 * record had when it was deleted, unanswered, so that it comes to the filters the record met.
 */
import { ApiError, badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { parseTime } from '../../query/time-spec.js';
import { Sql, sql } from '../../storage/sql.js';
import type { ContainerDefinition } from '../models/containers.js';
import { propertyReadFields } from '../models/containers.js';
import { describeTarget, parseFilter, parsePropertyReference, requireRecordContainer, type DmFilter, type FilterOptions, type FilterSchema } from '../models/filter.js';
import { containerKey, fail, missingContainers, type ContainerId, type Path } from '../models/identifiers.js';
import { targetConversion } from '../models/instance-reads.js';
import { isList, propertyTypeReadForm, type PropertyType } from '../models/property-types.js';
import { visibleSchema } from '../models/space-access.js';
import { parseTimestamp } from '../models/timestamps.js';
import { describeType } from '../models/values.js';
import { unitCatalog } from '../units/catalog.js';
import type { UnitConversion } from '../units/conversion.js';
import { unitConversion } from '../units/conversion.js';
import { renderProperties, type RecordDocument, type SelectedContainer } from './record-documents.js';
import { RecordSql } from './record-sql.js';
import { RECORD_LIMITS, type FilterRecordsBody, type LastUpdatedTime, type RecordSources, type RecordTargetUnits, type SyncRecordsBody } from './schema.js';
import { streamsSettings } from './settings.js';
import { readableStream, type Stream } from './streams.js';
import { RECORD_STATE } from './tables.js';

/** What a read of records is checked against: the schema the caller sees, read as the records language reads it. */
export async function recordSchema(services: Services, projectId: number): Promise<FilterSchema> {
  return (await visibleSchema(services, projectId)).resolver;
}

export const recordOptions = (schema: FilterSchema): FilterOptions => ({ schema, records: true });

/** A record container by reference; a 400 listing it under `missing` when the caller sees none. */
export function recordContainer(schema: FilterSchema, id: ContainerId, path: Path): ContainerDefinition {
  const c = schema.container(id);
  if (!c) throw missingContainers([{ space: id.space, externalId: id.externalId }], path);
  requireRecordContainer(c, path);
  return c;
}

/**
 * `targetUnits`: conversions of named properties, or of every property with a unit that the named unit
 * system has a unit for.
 */
export class RecordUnits {
  private readonly byProperty = new Map<string, UnitConversion>();
  private readonly system?: ReturnType<typeof unitCatalog.system>;

  constructor(targetUnits: RecordTargetUnits | undefined, schema: FilterSchema, path: Path = ['targetUnits']) {
    if (!targetUnits) return;
    const { properties, unitSystemName } = targetUnits;
    if ((properties === undefined) === (unitSystemName === undefined)) fail(path, 'give exactly one of properties and unitSystemName');
    if (unitSystemName !== undefined) {
      this.system = unitCatalog.system(unitSystemName) ?? fail([...path, 'unitSystemName'], `${JSON.stringify(unitSystemName)} is not a unit system of the units catalog`);
    }
    (properties ?? []).forEach((t, i) => {
      const where = [...path, 'properties', i];
      const target = parsePropertyReference(t.property, recordOptions(schema), [...where, 'property']);
      if (target.kind !== 'container') fail([...where, 'property'], 'expected a container property [space, container, property]');
      const key = unitKey(target.container, target.property);
      if (this.byProperty.has(key)) fail(where, `${describeTarget(target)} is given a target unit twice`);
      this.byProperty.set(key, targetConversion(target.type, t.unit, where, describeTarget(target)));
    });
  }

  of(container: ContainerId, property: string, type: PropertyType): UnitConversion | undefined {
    const named = this.byProperty.get(unitKey(container, property));
    if (named || !this.system || (type.type !== 'float32' && type.type !== 'float64') || !type.unit) return named;
    const from = unitCatalog.unit(type.unit.externalId)!;
    const to = unitCatalog.systemUnit(this.system, from.quantity);
    return to ? unitConversion(from, to) : undefined;
  }
}

const unitKey = (c: ContainerId, property: string) => `${containerKey(c)}.${property}`;

/** `sources`: the containers and properties a read returns. */
export function selectedContainers(sources: RecordSources | undefined, schema: FilterSchema, units: RecordUnits, path: Path = ['sources']): SelectedContainer[] {
  const seen = new Set<string>();
  return (sources ?? []).map((s, i) => {
    const where = [...path, i];
    const definition = recordContainer(schema, s.source, [...where, 'source']);
    const key = containerKey(s.source);
    if (seen.has(key)) fail([...where, 'source'], `the container ${key} is listed twice`);
    seen.add(key);
    const all = s.properties.includes('*');
    if (!all) {
      s.properties.forEach((p, j) => {
        if (!Object.hasOwn(definition.properties, p)) fail([...where, 'properties', j], `the container ${key} has no property ${JSON.stringify(p)}`);
      });
    }
    const names = all ? Object.keys(definition.properties) : s.properties;
    const conversions = new Map<string, UnitConversion>();
    for (const p of names) {
      const c = units.of(s.source, p, definition.properties[p].type);
      if (c) conversions.set(p, c);
    }
    return { id: { space: s.source.space, externalId: s.source.externalId }, definition, ...(all ? {} : { properties: new Set(s.properties) }), units: conversions };
  });
}

/** `typing`: the types of the properties named, by space, container and property, in the units answered. */
export function typingOf(entries: Iterable<{ id: ContainerId; definition: ContainerDefinition; property: string; unit?: UnitConversion }>): RecordDocument {
  const typing: RecordDocument = {};
  for (const e of entries) {
    const def = e.definition.properties[e.property];
    const type = propertyTypeReadForm(def.type);
    if (e.unit) type.unit = { externalId: e.unit.to.externalId };
    ((typing[e.id.space] ??= {})[e.id.externalId] ??= {})[e.property] = { type, ...propertyReadFields(def) };
  }
  return typing;
}

function selectedTyping(selected: readonly SelectedContainer[]): RecordDocument {
  return typingOf(
    selected.flatMap((s) =>
      Object.keys(s.definition.properties)
        .filter((p) => !s.properties || s.properties.has(p))
        .map((property) => ({ id: s.id, definition: s.definition, property, unit: s.units.get(property) })),
    ),
  );
}

/** A bound of `lastUpdatedTime`: epoch milliseconds, or ISO 8601 text. */
function timeBound(v: string | number, path: Path): number {
  if (typeof v === 'number') return v;
  const ms = parseTimestamp(v);
  if (ms === undefined) fail(path, `expected epoch milliseconds or an ISO 8601 time such as "2025-05-15T18:00:00.000Z", got ${JSON.stringify(v.slice(0, 40))}`);
  return ms;
}

/**
 * The conditions of a read's `lastUpdatedTime` range and of the stream's retention. An immutable stream is
 * read in ranges with a lower bound, no longer than its `maxFilteringInterval` (to now, when there is no
 * upper bound).
 */
export function timeConditions(range: LastUpdatedTime | undefined, stream: Stream, now: number, q: RecordSql, path: Path = ['lastUpdatedTime']): Sql[] {
  const out = retained(stream, now, q);
  const lut = q.field('last_updated_time');
  if (range === undefined) {
    if (stream.type === 'Immutable') fail(path, `is required for the immutable stream ${JSON.stringify(stream.externalId)}, with a lower bound (gt or gte)`);
    return out;
  }
  if (range.gt !== undefined && range.gte !== undefined) fail(path, 'gt and gte cannot be combined');
  if (range.lt !== undefined && range.lte !== undefined) fail(path, 'lt and lte cannot be combined');
  const bounds: Array<[keyof LastUpdatedTime, string]> = [
    ['gt', '>'],
    ['gte', '>='],
    ['lt', '<'],
    ['lte', '<='],
  ];
  const value: Partial<Record<keyof LastUpdatedTime, number>> = {};
  for (const [key, op] of bounds) {
    const v = range[key];
    if (v === undefined) continue;
    value[key] = timeBound(v, [...path, key]);
    out.push(sql`${lut} ${Sql.raw(op)} ${value[key]!}`);
  }
  const lower = value.gt ?? value.gte;
  if (lower === undefined) fail(path, 'needs a lower bound, gt or gte');
  const upper = value.lt ?? value.lte ?? now;
  if (stream.maxFilteringMs !== undefined && upper - lower > stream.maxFilteringMs) {
    fail(
      path,
      `spans ${upper - lower} ms, and the stream ${JSON.stringify(stream.externalId)} is read at most ${stream.settings.limits.maxFilteringInterval} (${stream.maxFilteringMs} ms) at a time (maxFilteringInterval); read it in several ranges`,
    );
  }
  return out;
}

/** The records the stream still keeps: those within its retention. */
export function retained(stream: Stream, now: number, q: RecordSql): Sql[] {
  return stream.retentionMs === undefined ? [] : [sql`${q.field('last_updated_time')} >= ${now - stream.retentionMs}`];
}

const SELECT = (q: RecordSql) =>
  sql`${q.field('seq')} AS seq, ${q.field('space')} AS space, ${q.field('external_id')} AS external_id, ${q.field('created_time')} AS created_time,
    ${q.field('last_updated_time')} AS last_updated_time, ${q.field('state')} AS state, ${q.dialect.documentText(q.field('doc'))} AS doc`;

interface RecordRow {
  seq: number;
  space: string;
  external_id: string;
  created_time: number;
  last_updated_time: number;
  state: number;
  doc: string | null;
}

function render(row: RecordRow, selected: readonly SelectedContainer[]): Record<string, unknown> {
  return {
    space: row.space,
    externalId: row.external_id,
    createdTime: Number(row.created_time),
    lastUpdatedTime: Number(row.last_updated_time),
    properties: renderProperties(row.doc, selected),
  };
}

const STATUS = ['created', 'updated', 'deleted'] as const;

/**
 * The records of a stream that a filter or an aggregate reads, tombstones left out, in its `lastUpdatedTime`
 * range. An immutable stream has no tombstones: leaving the condition out lets the index on the time answer
 * what needs no property (a count) without reading the rows.
 */
export function liveRecords(q: RecordSql, projectId: number, stream: Stream, range: LastUpdatedTime | undefined, now: number): Sql[] {
  return [...q.ofStream(projectId, stream.id), ...(stream.type === 'Mutable' ? [sql`${q.field('state')} <> ${RECORD_STATE.deleted}`] : []), ...timeConditions(range, stream, now, q)];
}

/** A checked filter of a records request, or undefined without one. */
export function recordFilter(raw: unknown, schema: FilterSchema, path: Path = ['filter']): DmFilter | undefined {
  return raw === undefined ? undefined : parseFilter(raw, recordOptions(schema), path);
}

/** What filter and sync read: the stream, the schema, what they return of each record, and the filter. */
async function readPlan(services: Services, projectId: number, streamExternalId: string, body: FilterRecordsBody | SyncRecordsBody) {
  const stream = await readableStream(services.reads, projectId, streamExternalId);
  const schema = await recordSchema(services, projectId);
  const selected = selectedContainers(body.sources, schema, new RecordUnits(body.targetUnits, schema));
  return { stream, schema, selected, q: new RecordSql(services.db.dialect, services.access), filter: recordFilter(body.filter, schema) };
}

export async function filterRecords(services: Services, projectId: number, streamExternalId: string, body: FilterRecordsBody) {
  const { stream, schema, selected, q, filter } = await readPlan(services, projectId, streamExternalId, body);
  const where = liveRecords(q, projectId, stream, body.lastUpdatedTime, services.now());
  if (filter) where.push(q.compile(filter));
  const order = (body.sort ?? []).flatMap((s, i) => {
    const where = ['sort', i, 'property'];
    const target = parsePropertyReference(s.property, recordOptions(schema), where);
    if (isList(target.type) || target.type.type === 'json') fail(where, `${describeTarget(target)} is a ${describeType(target.type)} property; sorts order single values`);
    const direction = Sql.raw(s.direction === 'descending' ? 'DESC' : 'ASC');
    const column = q.column(target);
    // Records without a value come last in either direction, unless asked for first.
    return target.kind === 'base' ? [sql`${column} ${direction}`] : [sql`(${column} IS NULL) ${Sql.raw(s.nullsFirst ? 'DESC' : 'ASC')}`, sql`${column} ${direction}`];
  });
  if (order.length === 0) order.push(sql`${q.field('last_updated_time')}`);
  order.push(sql`${q.field('seq')}`);
  const rows = await services.reads.all<RecordRow>(
    sql`SELECT ${SELECT(q)} FROM records r WHERE ${Sql.and(where)} ORDER BY ${Sql.join(order, ', ')} LIMIT ${body.limit ?? RECORD_LIMITS.readDefault}`,
  );
  return { items: rows.map((r) => render(r, selected)), ...(body.includeTyping ? { typing: selectedTyping(selected) } : {}) };
}

/** What a sync cursor carries: the feed position after the last record returned, and when it was issued. */
interface SyncState {
  seq: number;
  issued: number;
}

export async function syncRecords(services: Services, projectId: number, streamExternalId: string, body: SyncRecordsBody) {
  const { stream, selected, q, filter } = await readPlan(services, projectId, streamExternalId, body);
  const now = services.now();
  const maxAge = streamsSettings(services).tombstoneRetentionMs;
  // A cursor belongs to its stream (this one, not a later stream of the same identifier), its filter, and the
  // spaces its caller reads: what it stepped past was chosen by all three.
  const access = services.access;
  const spaces = access === undefined || access.all ? 'all' : [...access.spaces].sort();
  const binding = { op: 'records/sync', stream: stream.id, filter: body.filter ?? null, spaces };
  const lut = q.field('last_updated_time');
  // The stream's position, read before any record: every record at or before it is visible to the reads after.
  const head = await headOf(services, projectId, stream);

  let start: number;
  if (body.cursor !== undefined) {
    const state = services.cursors.decode(body.cursor, binding) as SyncState;
    if (now - state.issued > maxAge) {
      throw new ApiError(400, `cursor: the cursor expired (it is older than ${maxAge} ms, after which deletes may have been missed); start again with initializeCursor`);
    }
    start = state.seq;
  } else if (body.initializeCursor !== undefined) {
    if (!/-ago$/.test(body.initializeCursor)) throw badRequest(`initializeCursor: expected a time such as "2d-ago" (<number><s|m|h|d|w>-ago), got ${JSON.stringify(body.initializeCursor)}`);
    const from = parseTime(body.initializeCursor, now, 'initializeCursor');
    const [first] = await services.reads.all<{ seq: number }>(
      sql`SELECT seq FROM records r WHERE ${Sql.and([...q.ofStream(projectId, stream.id), sql`${lut} >= ${from}`])} ORDER BY r.last_updated_time, r.seq LIMIT 1`,
    );
    start = first ? Number(first.seq) - 1 : head;
  } else {
    throw badRequest(`${formatPath(['cursor'])}: give a cursor from an earlier answer, or initializeCursor (such as "2d-ago") to start`);
  }

  // Records and tombstones alike: a tombstone keeps the properties its record had, for the filter.
  const where = [...q.ofStream(projectId, stream.id), sql`r.seq > ${start}`, ...retained(stream, now, q)];
  if (filter) where.push(q.compile(filter));
  const limit = body.limit ?? RECORD_LIMITS.readDefault;
  const rows = await services.reads.all<RecordRow>(
    sql`SELECT ${SELECT(q)} FROM records r WHERE ${Sql.and(where)}
      ORDER BY r.seq LIMIT ${limit + 1}`,
  );
  const hasNext = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page.length ? Number(page[page.length - 1].seq) : start;
  const next = hasNext ? last : Math.max(last, head);
  return {
    items: page.map((row) => {
      const status = STATUS[Number(row.state)];
      if (status === 'deleted') return { space: row.space, externalId: row.external_id, createdTime: Number(row.created_time), lastUpdatedTime: Number(row.last_updated_time), status };
      return { ...render(row, selected), status };
    }),
    nextCursor: services.cursors.encode({ seq: next, issued: now } satisfies SyncState, binding),
    hasNext,
    ...(body.includeTyping ? { typing: selectedTyping(selected) } : {}),
  };
}

/** The last position of the stream's feed that a reader can see. */
async function headOf(services: Services, projectId: number, stream: Stream): Promise<number> {
  const [row] = await services.reads.all<{ seq: number }>(sql`SELECT seq FROM streams WHERE id = ${stream.id} AND project_id = ${projectId}`);
  return row ? Number(row.seq) : 0;
}
