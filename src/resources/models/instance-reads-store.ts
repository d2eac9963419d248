/**
 * Reading instances: by ids, list (filter, sort, keyset cursor, debug notices) and inspect. The properties of
 * each view read come from the container columns they map; `sources` restrict the answer to instances of
 * those views (the view's filter, or data in every container it maps).
 */
import { badRequest } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { fetchPage, type SortKey as PageKey } from '../../query/paging.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Reader } from '../../storage/read-pool.js';
import { fromColumn } from './container-tables.js';
import { propertyConstraintState, propertyReadFields } from './containers.js';
import { DebugReads } from './debug-info.js';
import { FilterBudget, parseFilter, type DmFilter, type FilterOptions, type PropertyTarget } from './filter.js';
import { globalInstancesCondition } from './global-instances.js';
import { containerKey, containerRef, viewRef, type InstanceType, type ViewId } from './identifiers.js';
import { checkSort, checkSources, type SortKey, type SourceRead } from './instance-reads.js';
import type { InspectInstancesBody, InstanceIdsBody, ListInstancesBody } from './instance-schema.js';
import { InstanceSql, requestScope } from './instance-sql.js';
import { containersHolding, findInstances, kindOf, typeOf } from './instance-writes-store.js';
import { propertyTypeReadForm, type PropertyType } from './property-types.js';
import type { ProjectSchema } from './schema-store.js';
import { inInstanceReadScope, visibleSchema } from './space-access.js';
import { decodeRef } from './store-schema.js';
import { renderValue, type StoredValue } from './values.js';

const BASE_SELECT = 'i.id, i.space, i.kind, i.external_id, i.type_ref, i.start_ref, i.end_ref, i.version, i.created_time, i.last_updated_time';

interface ReadColumn {
  source: number;
  property: string;
  type: PropertyType;
  /** The alias of the container column it maps (views mapping the same column share it). */
  alias: string;
}

/** A container column a read selects, under its alias. */
interface SelectedColumn {
  target: PropertyTarget & { kind: 'container' };
  alias: string;
}

/**
 * What one statement selects of the containers: SQLite joins at most 64 tables in one statement and returns
 * at most 2000 columns (PostgreSQL 1664), and the statement also joins what its filter and sort name.
 * The columns of the containers past these are read by a statement of their own (`complete`).
 */
const STATEMENT_CONTAINERS = 24;
const STATEMENT_COLUMNS = 1000;

/** What a read selects: base fields and the mapped properties of each source view. */
export class ReadShape {
  readonly columns: ReadColumn[] = [];
  /** The container columns, grouped by statement: the first in the read's own, the others each in one more. */
  private readonly groups: SelectedColumn[][] = [];

  constructor(
    readonly q: InstanceSql,
    readonly sources: readonly SourceRead[],
  ) {
    const aliases = new Map<string, string>();
    const byContainer = new Map<string, SelectedColumn[]>();
    sources.forEach((s, n) => {
      for (const [id, p] of s.view.properties) {
        if (p.kind !== 'mapped' || !q.schema.stored(p.container) || (s.properties && !s.properties.has(id))) continue;
        const key = `${containerKey(p.container)}\u0000${p.containerPropertyIdentifier}`;
        let alias = aliases.get(key);
        if (alias === undefined) {
          alias = `v${aliases.size}`;
          aliases.set(key, alias);
          const target = { kind: 'container' as const, container: p.container, property: p.containerPropertyIdentifier, type: p.definition.type };
          const list = byContainer.get(containerKey(p.container)) ?? [];
          byContainer.set(containerKey(p.container), [...list, { target, alias }]);
        }
        this.columns.push({ source: n, property: id, type: p.definition.type, alias });
      }
    });
    let group: SelectedColumn[] = [];
    let containers = 0;
    for (const columns of byContainer.values()) {
      if (group.length > 0 && (containers === STATEMENT_CONTAINERS || group.length + columns.length > STATEMENT_COLUMNS)) {
        this.groups.push(group);
        group = [];
        containers = 0;
      }
      group.push(...columns);
      containers++;
    }
    if (group.length > 0) this.groups.push(group);
  }

  select(): Sql {
    const own = (this.groups[0] ?? []).map((c) => sql`${this.q.column(c.target)} AS ${Sql.raw(c.alias)}`);
    return Sql.join([Sql.raw(BASE_SELECT), ...own], ', ');
  }

  /**
   * Reads into `rows` (as `select()` read them) the columns that did not fit in their statement: one more
   * statement per group of containers, by the rows' ids.
   */
  async complete(reads: Reader, rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
    if (this.groups.length < 2 || rows.length === 0) return;
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const ids = [...byId.keys()];
    for (const group of this.groups.slice(1)) {
      const q = this.q.under('i');
      const columns = group.map((c) => sql`${q.column(c.target)} AS ${Sql.raw(c.alias)}`);
      const more = await reads.all<Record<string, unknown>>(sql`SELECT i.id AS id, ${Sql.join(columns, ', ')} FROM ${q.from()} WHERE ${q.visible()} AND i.id IN (${this.q.dialect.idList(ids)})`);
      for (const r of more) {
        const row = byId.get(Number(r.id));
        if (row) for (const c of group) row[c.alias] = r[c.alias];
      }
    }
  }

  /** The condition that the instance is in every source view (the views' filters spend the request's `budget`). */
  inSources(schema: ProjectSchema, budget?: FilterBudget): Sql | undefined {
    if (this.sources.length === 0) return undefined;
    const filter = parseFilter({ hasData: this.sources.map((s) => viewRef(s.view.id)) }, { schema: schema.resolver, budget }, ['sources']);
    return this.q.compile(filter);
  }

  render(row: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {
      instanceType: typeOf(Number(row.kind)),
      space: row.space,
      externalId: row.external_id,
      version: Number(row.version),
    };
    if (row.type_ref !== null && row.type_ref !== undefined) out.type = decodeRef(row.type_ref as string);
    if (row.start_ref !== null && row.start_ref !== undefined) out.startNode = decodeRef(row.start_ref as string);
    if (row.end_ref !== null && row.end_ref !== undefined) out.endNode = decodeRef(row.end_ref as string);
    out.createdTime = Number(row.created_time);
    out.lastUpdatedTime = Number(row.last_updated_time);
    if (this.sources.length > 0) {
      const properties: Record<string, Record<string, Record<string, unknown>>> = {};
      this.sources.forEach((s) => {
        ((properties[s.view.id.space] ??= {})[`${s.view.id.externalId}/${s.view.id.version}`] = {});
      });
      for (const c of this.columns) {
        const v = fromColumn(row[c.alias], c.type);
        if (v === null) continue;
        const s = this.sources[c.source];
        const unit = s.units.get(c.property);
        const value = unit ? convert(v, unit.value) : v;
        properties[s.view.id.space][`${s.view.id.externalId}/${s.view.id.version}`][c.property] = renderValue(value, c.type);
      }
      out.properties = properties;
    }
    return out;
  }

  typing(): Record<string, unknown> {
    const typing: Record<string, Record<string, Record<string, unknown>>> = {};
    for (const s of this.sources) {
      const props: Record<string, unknown> = {};
      for (const [id, p] of s.view.properties) {
        if (p.kind !== 'mapped' || (s.properties && !s.properties.has(id))) continue;
        const unit = s.units.get(id);
        const type = propertyTypeReadForm(p.definition.type, p.source);
        if (unit) type.unit = { externalId: unit.to.externalId };
        const states = this.q.schema.states(p.container)?.properties?.[p.containerPropertyIdentifier];
        props[id] = { type, ...propertyReadFields(p.definition), constraintState: propertyConstraintState(p.definition, states) };
      }
      (typing[s.view.id.space] ??= {})[`${s.view.id.externalId}/${s.view.id.version}`] = props;
    }
    return typing;
  }
}

const convert = (v: StoredValue, f: (x: number) => number): StoredValue => (Array.isArray(v) ? (v as number[]).map(f) : f(v as number));

export async function instancesByIds(services: Services, projectId: number, body: InstanceIdsBody) {
  const schema = await visibleSchema(services, projectId);
  const sources = checkSources(body.sources, schema.resolver, ['sources']);
  const wanted = body.items.filter((i) => inInstanceReadScope(services.access, i.space));
  const found = await findInstances(services.reads, projectId, wanted);
  const ids = [...found.values()].filter((r) => r.deleted_time === null).map((r) => r.id);
  const q = new InstanceSql(requestScope(services, projectId, schema));
  const shape = new ReadShape(q, sources);
  const rows = ids.length ? await readRows(services.reads, q, shape, sql`i.id IN (${ids})`, schema) : [];
  const byKey = new Map(rows.map((r) => [`${typeOf(Number(r.kind))}:${r.space}:${r.external_id}`, r]));
  const seen = new Set<string>();
  const items = [];
  for (const item of wanted) {
    const key = `${item.instanceType}:${item.space}:${item.externalId}`;
    if (seen.has(key) || !byKey.has(key)) continue;
    seen.add(key);
    items.push(shape.render(byKey.get(key)!));
  }
  return { items, ...(body.includeTyping ? { typing: shape.typing() } : {}) };
}

async function readRows(reads: Reader, q: InstanceSql, shape: ReadShape, condition: Sql, schema: ProjectSchema): Promise<Array<Record<string, unknown>>> {
  const select = shape.select();
  const inSources = shape.inSources(schema);
  const where = Sql.and([q.visible(), Sql.raw('i.deleted_time IS NULL'), condition, ...(inSources ? [inSources] : [])]);
  const rows = await reads.all<Record<string, unknown>>(sql`SELECT ${select} FROM ${q.from()} WHERE ${where}`);
  await shape.complete(reads, rows);
  return rows;
}

/** Sort keys of the pager from checked sort keys. */
export function pageKeys(q: InstanceSql, sort: readonly SortKey[], required: ReadonlySet<string>): PageKey[] {
  return sort.map((k) => {
    const t = k.target;
    // A non-nullable property of a container every listed instance has data in always has a value.
    const nullable = t.kind === 'container' && required.has(containerKey(t.container)) ? q.schema.container(t.container)!.properties[t.property].nullable : q.nullable(t);
    const text = k.target.type.type !== 'direct' && !['int32', 'int64', 'float32', 'float64', 'timestamp', 'boolean'].includes(k.target.type.type);
    return {
      expr: q.column(k.target),
      nullable,
      desc: k.direction === 'descending',
      nullsFirst: k.nullsFirst,
      blank: Sql.raw(text || k.target.type.type === 'direct' ? "''" : '0'),
    };
  });
}

/** Whether a sort is served by a cursorable btree index of its container, in the order the index keeps. */
function sortBacked(schema: ProjectSchema, sort: readonly SortKey[]): boolean {
  if (sort.length === 0) return true;
  if (sort.every((k) => k.target.kind === 'base')) {
    return sort.length === 1 && sort[0].target.kind === 'base' && ['externalId', 'space'].includes(sort[0].target.field);
  }
  const first = sort[0].target;
  if (first.kind !== 'container' || sort.some((k) => k.target.kind !== 'container' || containerKey(k.target.container) !== containerKey(first.container))) return false;
  const def = schema.container(first.container)!;
  const aligned = sort.every((k) => (k.direction === 'descending') === k.nullsFirst && (k.direction === 'descending') === (sort[0].direction === 'descending'));
  return (
    aligned &&
    Object.values(def.indexes).some(
      (x) => x.indexType === 'btree' && x.cursorable && sort.every((k, i) => k.target.kind === 'container' && x.properties[i] === k.target.property),
    )
  );
}

/**
 * The result set expression a list is, as its debug answer names it: a list is one set, read as query reads
 * a set.
 */
export const LIST_EXPRESSION = 'list';

/** The debug notice of the sort of a result set expression that no cursorable index serves; undefined when one does. */
export function sortNotice(schema: ProjectSchema, sort: readonly SortKey[], requested: unknown, resultExpression: string): Record<string, unknown> | undefined {
  if (sortBacked(schema, sort)) return undefined;
  return {
    code: 'sortNotBackedByIndex',
    category: 'sorting',
    level: 'warning',
    grade: 'C',
    hint: 'No cursorable btree index of the container holds the sort properties in this order; the sort reads every match before the page. Declare a cursorable index on them.',
    sort: requested,
    resultExpression,
  };
}

export async function listInstances(services: Services, projectId: number, body: ListInstancesBody) {
  const schema = await visibleSchema(services, projectId);
  const instanceType: InstanceType = body.instanceType ?? 'node';
  const sources = checkSources(body.sources, schema.resolver, ['sources']);
  const options: FilterOptions = { schema: schema.resolver, instanceType, view: sources.length === 1 ? sources[0].view.id : undefined, budget: new FilterBudget() };
  const filter: DmFilter | undefined = body.filter !== undefined ? parseFilter(body.filter, options) : undefined;
  const sort = checkSort(body.sort, options, ['sort']);
  const q = new InstanceSql(requestScope(services, projectId, schema));
  const shape = new ReadShape(q, sources);
  const conditions = [q.visible(), sql`i.kind = ${kindOf(instanceType)}`, Sql.raw('i.deleted_time IS NULL')];
  const inSources = shape.inSources(schema, options.budget);
  if (inSources) conditions.push(inSources);
  if (filter) conditions.push(q.compile(filter));
  conditions.push(globalInstancesCondition(filter, 'i.space'));
  // Containers every listed instance has data in: those of the source views that have no filter of their own.
  const required = new Set(sources.filter((s) => s.view.definition.filter === undefined).flatMap((s) => s.view.mappedContainers.map(containerKey)));
  const keys = pageKeys(q, sort, required);
  const select = shape.select();
  // A sort led by a property of such a container is read from that container's table first, so its index
  // (project, property..., instance) serves the order.
  const first = sort[0]?.target;
  const lead = first?.kind === 'container' && required.has(containerKey(first.container)) ? first.container : undefined;
  if (lead) conditions.push(sql`${Sql.raw(`${q.container(lead)}.project_id`)} = ${projectId}`);
  const binding = { op: 'instances/list', instanceType, sources: body.sources ?? [], filter: body.filter ?? null, sort: body.sort ?? [] };
  const after = body.cursor !== undefined && body.cursor !== null ? services.cursors.decode(body.cursor, binding) : undefined;

  const notice = sortNotice(schema, sort, body.sort, LIST_EXPRESSION);
  const debug = new DebugReads(services, body.debug);
  debug.readingFor(LIST_EXPRESSION);
  let items: Array<Record<string, unknown>> = [];
  let nextCursor: string | undefined;
  if (debug.read) {
    const page = await fetchPage<Record<string, unknown>>(debug.reads, {
      dialect: services.db.dialect,
      select,
      from: q.table(),
      joins: q.joins(),
      pick: lead ? q.ledBy(lead) : undefined,
      where: Sql.and(conditions),
      scope: sql`i.project_id = ${projectId}`,
      keys,
      idExpr: lead ? `${q.container(lead)}.instance_id` : 'i.id',
      limit: body.limit ?? 1000,
      after,
    });
    await shape.complete(debug.reads, page.rows);
    if (debug.emit) {
      items = page.rows.map((r) => shape.render(r));
      if (page.next) nextCursor = services.cursors.encode(page.next, binding);
    }
  }
  return {
    items,
    ...(body.includeTyping ? { typing: shape.typing() } : {}),
    ...(nextCursor ? { nextCursor } : {}),
    ...(await debug.answer(notice ? [notice] : [])),
  };
}

export async function inspectInstances(services: Services, projectId: number, body: InspectInstancesBody) {
  const ops = body.inspectionOperations;
  if (!ops.involvedViews && !ops.involvedContainers) throw badRequest('inspectionOperations: name at least one of involvedViews and involvedContainers');
  const schema = await visibleSchema(services, projectId);
  const wanted = body.items.filter((i) => inInstanceReadScope(services.access, i.space));
  const found = await findInstances(services.reads, projectId, wanted);
  const live = [...found.values()].filter((r) => r.deleted_time === null);
  const ids = live.map((r) => r.id);
  const containersOf = await containersHolding(services.reads, projectId, schema, ids);
  const views = (allVersions: boolean) => {
    const all = [...schema.views.values()];
    if (allVersions) return all;
    const latest = new Map<string, (typeof all)[number]>();
    for (const v of all) {
      const k = containerKey(v.definition);
      const b = latest.get(k);
      if (!b || v.createdTime > b.createdTime || (v.createdTime === b.createdTime && v.id > b.id)) latest.set(k, v);
    }
    return [...latest.values()];
  };
  const items = [];
  const seen = new Set<string>();
  for (const item of wanted) {
    const key = `${item.instanceType}:${item.space}:${item.externalId}`;
    const row = found.get(key);
    if (!row || row.deleted_time !== null || seen.has(key)) continue;
    seen.add(key);
    const held = new Set(containersOf.get(row.id) ?? []);
    const results: Record<string, unknown> = {};
    if (ops.involvedContainers) {
      results.involvedContainers = [...held].map((k) => containerRef(schema.containers.get(k)!.definition));
    }
    if (ops.involvedViews) {
      results.involvedViews = views(ops.involvedViews.allVersions ?? false)
        .filter((v) => (schema.resolver.view(v.definition)?.mappedContainers ?? []).some((c) => held.has(containerKey(c))))
        .map((v) => viewRef(v.definition as ViewId));
    }
    items.push({ instanceType: item.instanceType, space: item.space, externalId: item.externalId, inspectionResults: results });
  }
  return { items };
}
