/**
 * Events: the rules of each operation. Every write runs in one transaction and is applied completely or
 * not at all.
 */
import { Sql, sql } from '../../storage/sql.js';
import { all, inTransaction } from '../../storage/db.js';
import { badRequest, duplicatedItems, formatPath, notFound } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { applyArrayPatch, applyMetadataPatch, applyNullablePatch, checkMetadata } from '../../http/patch.js';
import { and, containsAnyLeaf, equalsLeaf, isNullNode, metadataNode, prefixLeaf, rangeLeaf } from '../../query/basic.js';
import type { FilterNode } from '../../query/filter.js';
import { ftsQuery } from '../../query/filter.js';
import { DEFAULT_LIMIT, parseQuery, runList } from '../../query/list.js';
import { runAggregate, type AggregateRequest } from '../../query/aggregate.js';
import { checkRef, existingExternalIds, rejectDuplicateRefs, resolveRefs, type Ref, type RefInput } from '../../query/refs.js';
import {
  EVENT_COLUMNS,
  deleteEvent,
  eventCatalog as catalog,
  eventsByIds,
  insertEvent,
  toEvent,
  toValues,
  updateEvent,
  type Event,
  type EventRow,
  type EventValues,
} from './store.js';
import { EVENT_LIMITS, type EventCreate, type EventFilter, type UpdateEventsBody } from './schema.js';

type Path = Array<string | number>;

function checkTimes(v: Pick<EventValues, 'startTime' | 'endTime'>, path: Path): void {
  if (v.startTime !== null && v.endTime !== null && v.endTime < v.startTime) {
    throw badRequest(`${formatPath(path)}: endTime (${v.endTime}) must not be before startTime (${v.startTime})`);
  }
}

function fromCreate(item: EventCreate): EventValues {
  return {
    externalId: item.externalId ?? null,
    dataSetId: item.dataSetId ?? null,
    startTime: item.startTime ?? null,
    endTime: item.endTime ?? null,
    type: item.type ?? null,
    subtype: item.subtype ?? null,
    description: item.description ?? null,
    source: item.source ?? null,
    metadata: item.metadata ?? null,
    assetIds: item.assetIds ?? null,
  };
}

function rejectDuplicateExternalIds(externalIds: string[]): void {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const x of externalIds) (seen.has(x) ? dup : seen).add(x);
  if (dup.size) throw duplicatedItems([...dup].map((externalId) => ({ externalId })));
}

export function createEvents(services: Services, projectId: number, items: EventCreate[]): Event[] {
  const values = items.map((item, i) => {
    const v = fromCreate(item);
    checkTimes(v, ['items', i]);
    checkMetadata(v.metadata, ['items', i, 'metadata']);
    return v;
  });
  const externalIds = values.map((v) => v.externalId).filter((x): x is string => x !== null);
  rejectDuplicateExternalIds(externalIds);
  const { db } = services;
  return inTransaction(db, () => {
    const existing = existingExternalIds(db, 'events', projectId, externalIds);
    if (existing.size) throw duplicatedItems([...existing.keys()].map((externalId) => ({ externalId })));
    const now = services.now();
    const ids = values.map((v) => insertEvent(db, projectId, v, now));
    const rows = eventsByIds(db, projectId, ids);
    return ids.map((id) => toEvent(rows.get(id)!));
  });
}

function checkRefs(items: RefInput[]): Ref[] {
  const refs = items.map((r, i) => checkRef(r, ['items', i]));
  rejectDuplicateRefs(refs);
  return refs;
}

export function retrieveEvents(services: Services, projectId: number, items: RefInput[], ignoreUnknownIds = false): Event[] {
  const ids = resolveRefs(services.db, 'events', projectId, checkRefs(items), ignoreUnknownIds);
  const rows = eventsByIds(services.db, projectId, ids);
  return ids.map((id) => toEvent(rows.get(id)!));
}

export function getEvent(services: Services, projectId: number, id: number): Event {
  const row = eventsByIds(services.db, projectId, [id]).get(id);
  if (!row) throw notFound(`No event with id ${id} in this project`);
  return toEvent(row);
}

export function deleteEvents(services: Services, projectId: number, items: RefInput[], ignoreUnknownIds = false): void {
  const refs = checkRefs(items);
  const { db } = services;
  inTransaction(db, () => {
    for (const id of resolveRefs(db, 'events', projectId, refs, ignoreUnknownIds)) deleteEvent(db, id);
  });
}

export function updateEvents(services: Services, projectId: number, items: UpdateEventsBody['items']): Event[] {
  const refs = checkRefs(items);
  const { db } = services;
  return inTransaction(db, () => {
    const ids = resolveRefs(db, 'events', projectId, refs);
    const rows = eventsByIds(db, projectId, ids);
    const next = items.map((item, i) => {
      const current = toValues(rows.get(ids[i])!);
      const u = item.update;
      const path: Path = ['items', i, 'update'];
      const v: EventValues = {
        externalId: applyNullablePatch(current.externalId, u.externalId, [...path, 'externalId']),
        dataSetId: applyNullablePatch(current.dataSetId, u.dataSetId, [...path, 'dataSetId']),
        startTime: applyNullablePatch(current.startTime, u.startTime, [...path, 'startTime']),
        endTime: applyNullablePatch(current.endTime, u.endTime, [...path, 'endTime']),
        type: applyNullablePatch(current.type, u.type, [...path, 'type']),
        subtype: applyNullablePatch(current.subtype, u.subtype, [...path, 'subtype']),
        description: applyNullablePatch(current.description, u.description, [...path, 'description']),
        source: applyNullablePatch(current.source, u.source, [...path, 'source']),
        metadata: applyMetadataPatch(current.metadata, u.metadata, [...path, 'metadata']),
        assetIds: applyArrayPatch(current.assetIds, u.assetIds, [...path, 'assetIds'], EVENT_LIMITS.assetIds),
      };
      checkTimes(v, ['items', i]);
      return v;
    });
    // External ids must stay unique: against each other, and against events this request does not change.
    const changed = next
      .map((v, i) => ({ v, id: ids[i] }))
      .filter(({ v, id }) => v.externalId !== null && v.externalId !== rows.get(id)!.external_id);
    rejectDuplicateExternalIds(next.map((v) => v.externalId).filter((x): x is string => x !== null));
    const taken = existingExternalIds(
      db,
      'events',
      projectId,
      changed.map(({ v }) => v.externalId!),
    );
    const updating = new Set(ids);
    const conflicts = [...taken].filter(([, id]) => !updating.has(id)).map(([externalId]) => ({ externalId }));
    if (conflicts.length) throw duplicatedItems(conflicts);
    // Release changed external ids first, so swaps within one request do not collide on the unique index.
    for (const { id } of changed) db.prepare('UPDATE events SET external_id = NULL WHERE id = ?').run(id);
    const now = services.now();
    next.forEach((v, i) => updateEvent(db, projectId, ids[i], v, now));
    const after = eventsByIds(db, projectId, ids);
    return ids.map((id) => toEvent(after.get(id)!));
  });
}

/** The basic `filter` object as filter language, so it shares the compiler and the semantics. */
export function eventFilterNode(f: EventFilter | undefined): FilterNode | undefined {
  if (!f) return undefined;
  let endTime: FilterNode | undefined;
  if (f.endTime && 'isNull' in f.endTime) endTime = isNullNode(catalog, 'endTime', f.endTime.isNull);
  else endTime = rangeLeaf(catalog, 'endTime', f.endTime);
  let active: FilterNode | undefined;
  if (f.activeAtTime && (f.activeAtTime.min !== undefined || f.activeAtTime.max !== undefined)) {
    // Active from startTime to endTime inclusive; never active without startTime; open-ended without endTime.
    const { min, max } = f.activeAtTime;
    active = and([
      { op: 'exists', target: { type: 'property', name: 'startTime', def: catalog.properties.startTime } },
      max !== undefined ? rangeLeaf(catalog, 'startTime', { max }) : undefined,
      min !== undefined ? { op: 'or', args: [isNullNode(catalog, 'endTime', true), rangeLeaf(catalog, 'endTime', { min })!] } : undefined,
    ]);
  }
  return and([
    rangeLeaf(catalog, 'startTime', f.startTime),
    endTime,
    active,
    metadataNode(catalog, f.metadata),
    containsAnyLeaf(catalog, 'assetIds', f.assetIds),
    equalsLeaf(catalog, 'source', f.source),
    equalsLeaf(catalog, 'type', f.type),
    equalsLeaf(catalog, 'subtype', f.subtype),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
  ]);
}

export interface ListEventsInput {
  filter?: EventFilter;
  advancedFilter?: unknown;
  sort?: Array<{ property: string[]; order?: 'asc' | 'desc'; nulls?: 'auto' | 'first' | 'last' } | string>;
  limit?: number;
  cursor?: string;
  partition?: string;
}

export function listEvents(services: Services, projectId: number, req: ListEventsInput, includeMetadata = true) {
  const { filter, advancedFilter, sort, partition } = req;
  const result = runList<EventRow & Record<string, unknown>>(services, catalog, projectId, EVENT_COLUMNS, {
    filter: eventFilterNode(filter),
    advancedFilter,
    sort,
    partition,
    limit: req.limit,
    cursor: req.cursor,
    fingerprint: { resource: 'events', filter, advancedFilter, sort, partition },
  });
  return { items: result.rows.map((r) => toEvent(r, includeMetadata)), ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}) };
}

/** Relevance-ranked search on the description, narrowed by the basic filter. */
export function searchEvents(
  services: Services,
  projectId: number,
  req: { filter?: EventFilter; search?: { description?: string }; limit?: number },
) {
  const { where } = parseQuery(catalog, projectId, eventFilterNode(req.filter), undefined);
  const limit = req.limit ?? DEFAULT_LIMIT;
  const text = req.search?.description;
  const query =
    text !== undefined && text.trim() !== ''
      ? sql`SELECT ${Sql.raw(EVENT_COLUMNS)} FROM events_fts f JOIN events e ON e.id = f.rowid
            WHERE events_fts MATCH ${ftsQuery(text)} AND ${where} ORDER BY bm25(events_fts), e.id LIMIT ${limit}`
      : sql`SELECT ${Sql.raw(EVENT_COLUMNS)} FROM events e WHERE ${where} ORDER BY e.created_time, e.id LIMIT ${limit}`;
  return { items: all<EventRow>(services.db, query).map((r) => toEvent(r)) };
}

export function aggregateEvents(
  services: Services,
  projectId: number,
  req: Omit<AggregateRequest, 'filter'> & { filter?: EventFilter },
) {
  return runAggregate(services.db, catalog, projectId, { ...req, filter: eventFilterNode(req.filter) });
}
