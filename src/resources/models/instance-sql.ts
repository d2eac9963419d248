/**
 * Instances as SQL: the data modeling filter compiled through the shared boolean compiler
 * (query/filter.ts `compileBoolean`) with the leaves of this language, property references as columns of
 * the instance table or of a container's table (each container joined once, `LEFT JOIN`, so a missing row
 * reads as null values), sort keys, and the columns a read selects.
 *
 * Every leaf is false (or NULL, which the boolean compiler reads as false) where its value is missing, so the
 * filter has the two-valued semantics the language defines; see filter.ts.
 *
 * A query is for one caller (`InstanceScope`): the instances it names, at any depth (the rows it lists, the
 * node a `nested` filter tests, the far ends of a traversal), are those of the spaces the caller reads, and
 * the values the service derives from other instances (a maintained hierarchy's root and path) are what
 * those spaces alone would give. `table()` and `visible()` are how a query names the instance table; a
 * subquery over it is another `InstanceSql` of the same scope (`under`).
 *
 * The leaves are compiled by `FilterSql` from what a subclass says a property is (`column`) and what having
 * data in a container is (`hasData`): `InstanceSql` for instances, and the records of a stream
 * (resources/streams/record-sql.ts), whose properties are fields of a document, share the one compiler.
 */
import type { Access } from '../../auth/access.js';
import type { Services } from '../../http/services.js';
import { badRequest } from '../../http/errors.js';
import type { Dialect } from '../../storage/dialect.js';
import { compileBoolean, prefixUpperBound } from '../../query/filter.js';
import { FALSE, Sql, sql, TRUE } from '../../storage/sql.js';
import { toOperand, valueKind } from './container-tables.js';
import type { DmFilter, DmLeaf, Operand, PropertyTarget } from './filter.js';
import { containerKey, type ContainerId } from './identifiers.js';
import { hierarchyOf, visibleHierarchyValue } from './instance-hierarchy.js';
import { DM_LIMITS } from './limits.js';
import { isList, type PropertyType } from './property-types.js';
import type { ProjectSchema } from './schema-store.js';
import { instanceSpaceCondition, spaceCondition } from './space-access.js';
import { REF_SEPARATOR } from './store-schema.js';
import type { StoredScalar } from './values.js';

const BASE_COLUMNS: Record<string, string> = {
  version: 'version',
  space: 'space',
  externalId: 'external_id',
  type: 'type_ref',
  createdTime: 'created_time',
  lastUpdatedTime: 'last_updated_time',
  deletedTime: 'deleted_time',
  startNode: 'start_ref',
  endNode: 'end_ref',
};

/** Base fields that every instance has (the others may be null). */
const ALWAYS_SET = new Set(['instanceType', 'version', 'space', 'externalId', 'createdTime', 'lastUpdatedTime']);

/** Container tables one statement joins besides the instance table (SQLite joins at most 64 tables). */
const MAX_JOINED_CONTAINERS = 60;

const elementType = (t: PropertyType): PropertyType => (t.type === 'enum' || !t.list ? t : ({ ...t, list: false } as PropertyType));

/**
 * The filter language compiled to SQL over rows whose properties `column` names and whose data in a container
 * `hasData` tests.
 */
export abstract class FilterSql {
  abstract readonly dialect: Dialect;

  /** The value of a property of the row. */
  abstract column(t: PropertyTarget): Sql;

  /** Whether the row has data in a container. */
  abstract hasData(id: ContainerId): Sql;

  compile(filter: DmFilter): Sql {
    return compileBoolean(filter, (leaf) => this.leaf(leaf));
  }

  protected value(o: Operand, t: PropertyType, element = false): Sql {
    if (o.kind === 'property') return this.column(o.target);
    return sql`${toOperand(o.value, t, element)}`;
  }

  /** The elements of a list operand: a list of parameters, or a subquery of a list property's elements. */
  /**
   * The values of `in` and its kin, as the inside of `IN (...)`: one parameter each, or, past the filter
   * language's own limit (internal callers: a `through` followed inwards from a whole set), one JSON array
   * parameter, so that no statement exceeds the engine's number of parameters.
   */
  protected elements(o: Operand, element: PropertyType): Sql {
    if (o.kind === 'property') return this.dialect.jsonElements(this.column(o.target), kindOf(element));
    const values = (o.value as StoredScalar[]).map((v) => toOperand(v, element, true));
    if (values.length > DM_LIMITS.filterValues) return this.dialect.jsonElements(sql`${JSON.stringify(values)}`, kindOf(element));
    return values.length ? sql`${values}` : Sql.raw('NULL');
  }

  /** The leaves about the graph (`nested`, `instanceReferences`), which only instances have. */
  protected abstract graphLeaf(leaf: Extract<DmLeaf, { op: 'nested' | 'instanceReferences' }>): Sql;

  private leaf(leaf: DmLeaf): Sql {
    switch (leaf.op) {
      case 'matchAll':
        return TRUE;
      case 'nested':
      case 'instanceReferences':
        return this.graphLeaf(leaf);
      case 'hasData':
        return Sql.and(
          leaf.sources.map((s) => {
            if (s.type === 'container') return this.hasData(s.container);
            if (s.filter) return this.compile(s.filter);
            return Sql.and(s.containers.map((c) => this.hasData(c)));
          }),
        );
      case 'overlaps': {
        const start = this.column(leaf.start);
        const end = this.column(leaf.end);
        const t = leaf.start.type;
        const parts: Sql[] = [sql`(${start} IS NOT NULL OR ${end} IS NOT NULL)`];
        if (leaf.gt) parts.push(sql`(${end} IS NULL OR ${end} > ${this.value(leaf.gt, t)})`);
        if (leaf.gte) parts.push(sql`(${end} IS NULL OR ${end} >= ${this.value(leaf.gte, t)})`);
        if (leaf.lt) parts.push(sql`(${start} IS NULL OR ${start} < ${this.value(leaf.lt, t)})`);
        if (leaf.lte) parts.push(sql`(${start} IS NULL OR ${start} <= ${this.value(leaf.lte, t)})`);
        return Sql.and(parts);
      }
    }
    const col = this.column(leaf.target);
    const t = leaf.target.type;
    const element = elementType(t);
    const list = isList(t);
    const listElements = () => this.dialect.jsonElements(col, kindOf(element));
    switch (leaf.op) {
      case 'exists':
        return sql`${col} IS NOT NULL`;
      case 'equals':
        return sql`${col} = ${this.value(leaf.value, t)}`;
      case 'in':
      case 'containsAny': {
        if (!list) return sql`${col} IN (${this.elements(leaf.values, element)})`;
        return sql`EXISTS (SELECT 1 FROM (${listElements()}) e WHERE e.value IN (${this.elements(leaf.values, element)}))`;
      }
      case 'containsAll': {
        if (leaf.values.kind === 'property') {
          const other = this.dialect.jsonElements(this.column(leaf.values.target), kindOf(element));
          return sql`(${col} IS NOT NULL AND ${this.column(leaf.values.target)} IS NOT NULL AND NOT EXISTS (SELECT value FROM (${other}) o WHERE o.value NOT IN (SELECT e.value FROM (${listElements()}) e)))`;
        }
        const distinct = [...new Map((leaf.values.value as StoredScalar[]).map((v) => [JSON.stringify(v), v])).values()];
        if (distinct.length === 0) return sql`${col} IS NOT NULL`;
        const values = distinct.map((v) => toOperand(v, element, true));
        return sql`(SELECT count(DISTINCT e.value) FROM (${listElements()}) e WHERE e.value IN (${values})) = ${distinct.length}`;
      }
      case 'range': {
        const parts: Sql[] = [];
        const bound = (o: Operand | undefined, symbol: string) => {
          if (o) parts.push(sql`${col} ${Sql.raw(symbol)} ${this.value(o, t)}`);
        };
        bound(leaf.gt, '>');
        bound(leaf.gte, '>=');
        bound(leaf.lt, '<');
        bound(leaf.lte, '<=');
        return Sql.and(parts);
      }
      case 'prefix': {
        if (list) {
          if (leaf.value.kind === 'property') {
            // Lists are kept as canonical JSON text: a prefix list is the other's text up to its closing bracket.
            const other = this.column(leaf.value.target);
            return sql`(${col} IS NOT NULL AND ${other} IS NOT NULL AND (${other} = '[]' OR ${col} = ${other} OR substr(${col}, 1, length(${other})) = substr(${other}, 1, length(${other}) - 1) || ','))`;
          }
          const prefix = leaf.value.value as StoredScalar[];
          const parts = [sql`${this.dialect.jsonLength(col)} >= ${prefix.length}`];
          prefix.forEach((v, i) => parts.push(sql`${this.dialect.jsonElementAt(col, i, kindOf(element))} = ${toOperand(v, element, true)}`));
          return Sql.and(parts);
        }
        if (leaf.value.kind === 'property') {
          const other = this.column(leaf.value.target);
          return sql`substr(${col}, 1, length(${other})) = ${other}`;
        }
        const p = leaf.value.value as string;
        if (p === '') return sql`${col} IS NOT NULL`;
        const upper = prefixUpperBound(p);
        return upper === undefined ? sql`${col} >= ${p}` : sql`(${col} >= ${p} AND ${col} < ${upper})`;
      }
    }
  }
}

/** Whom a query over instances answers: the project, its schema, and the spaces the caller reads. */
export interface InstanceScope {
  readonly dialect: Dialect;
  readonly projectId: number;
  readonly schema: ProjectSchema;
  /** The caller's `dataModelInstancesAcl` scope; undefined (outside requests) is every space. */
  readonly access: Access | undefined;
}

/** The scope of a request's queries over instances. */
export function requestScope(services: Pick<Services, 'db' | 'access'>, projectId: number, schema: ProjectSchema): InstanceScope {
  return { dialect: services.db.dialect, projectId, schema, access: services.access };
}

/**
 * The SQL of one query over instances under the alias `alias`: the containers it reads are joined as they
 * are named, and `joins()` gives their JOIN clauses once compiling is done.
 */
export class InstanceSql extends FilterSql {
  private readonly joined = new Map<string, string>();
  private nestedCount = 0;
  readonly dialect: Dialect;
  readonly projectId: number;
  readonly schema: ProjectSchema;

  constructor(
    readonly scope: InstanceScope,
    readonly alias = 'i',
  ) {
    super();
    this.dialect = scope.dialect;
    this.projectId = scope.projectId;
    this.schema = scope.schema;
  }

  /** Another query over instances, for the same caller, under its own alias. */
  under(alias: string): InstanceSql {
    return new InstanceSql(this.scope, alias);
  }

  /** The instance table under this query's alias (without the containers' joins). */
  table(): Sql {
    return Sql.raw(`dm_instances ${this.alias}`);
  }

  /** The instance table with the containers' joins: call once compiling is done. */
  from(): Sql {
    return sql`${this.table()} ${this.joins()}`;
  }

  /**
   * The same for a keyset batch of the instances after the id `after` (the statement bounds the instance
   * id itself): each container's join is bounded as well, since PostgreSQL carries no range across the
   * join's equality, and otherwise reads a container's table from its start at every batch.
   */
  fromAfter(after: number): Sql {
    return sql`${this.table()} ${this.joins(undefined, after)}`;
  }

  /** The instances this query may name: the project's, in the spaces the caller reads (live or not, of either kind). */
  visible(): Sql {
    const space = instanceSpaceCondition(this.scope.access, `${this.alias}.space`);
    return Sql.and([sql`${Sql.raw(`${this.alias}.project_id`)} = ${this.projectId}`, ...(space ? [space] : [])]);
  }

  /** The alias of a container's table in this query, joined on first use. */
  container(id: ContainerId): string {
    const key = containerKey(id);
    let alias = this.joined.get(key);
    if (alias === undefined) {
      alias = `${this.alias}c${this.joined.size}`;
      this.joined.set(key, alias);
    }
    return alias;
  }

  /**
   * The FROM of a query led by a container's table (joined to the instance table on its rows), so that an
   * index of that table serves the sort; the other containers are joined as `joins()` joins them.
   */
  ledBy(id: ContainerId): Sql {
    const c = this.container(id);
    const table = this.schema.stored(id)!.layout.table;
    const a = this.alias;
    return sql`${Sql.raw(`${table} ${c} ${this.dialect.orderedJoin} dm_instances ${a} ON ${a}.project_id = ${c}.project_id AND ${a}.id = ${c}.instance_id`)} ${this.joins(containerKey(id))}`;
  }

  joins(except?: string, after?: number): Sql {
    // A last guard: reads keep their own containers in bounds (ReadShape), filters theirs (FilterBudget).
    if (this.joined.size > MAX_JOINED_CONTAINERS) {
      throw badRequest(`The request reads the data of ${this.joined.size} containers in one statement, and at most ${MAX_JOINED_CONTAINERS} can be joined; read fewer views at once, or filter on fewer containers`);
    }
    const a = this.alias;
    return Sql.join(
      [...this.joined]
        .filter(([key]) => key !== except)
        .map(([key, c]) => {
          const table = this.schema.containers.get(key)!.layout.table;
          const on = Sql.raw(`LEFT JOIN ${table} ${c} ON ${c}.project_id = ${a}.project_id AND ${c}.space = ${a}.space AND ${c}.instance_id = ${a}.id`);
          return after === undefined ? on : sql`${on} AND ${Sql.raw(c)}.instance_id > ${after}`;
        }),
      ' ',
    );
  }

  /** The value of a property of the instance. */
  column(t: PropertyTarget): Sql {
    if (t.kind === 'base') {
      if (t.field === 'instanceType') return Sql.raw(`(CASE WHEN ${this.alias}.kind = 0 THEN 'node' ELSE 'edge' END)`);
      return Sql.raw(`${this.alias}.${BASE_COLUMNS[t.field]}`);
    }
    const layout = this.schema.stored(t.container)!.layout;
    const alias = this.container(t.container);
    const stored = (property: string) => Sql.raw(`${alias}.${layout.columns[property]}`);
    const h = hierarchyOf(t.container);
    const access = this.scope.access;
    if (h && (t.property === h.root || t.property === h.path) && access !== undefined && !access.all) {
      return visibleHierarchyValue(this.dialect, h, t.property, stored, (space) => spaceCondition(access, space)!);
    }
    return stored(t.property);
  }

  protected graphLeaf(leaf: Extract<DmLeaf, { op: 'nested' | 'instanceReferences' }>): Sql {
    if (leaf.op === 'instanceReferences') {
      if (leaf.refs.length === 0) return FALSE;
      const rows = leaf.refs.map((r) => sql`(${r.space}, ${r.externalId})`);
      return sql`(${Sql.raw(this.alias)}.space, ${Sql.raw(this.alias)}.external_id) IN (VALUES ${Sql.join(rows, ', ')})`;
    }
    const inner = this.under(`${this.alias}n${this.nestedCount++}`);
    const condition = inner.compile(leaf.filter);
    const t = inner.alias;
    return sql`${this.column(leaf.scope)} IN (SELECT ${Sql.raw(`${t}.space`)} || ${REF_SEPARATOR} || ${Sql.raw(`${t}.external_id`)} FROM ${inner.from()} WHERE ${Sql.and([
      inner.visible(),
      Sql.raw(`${t}.kind = 0 AND ${t}.deleted_time IS NULL`),
      condition,
    ])})`;
  }

  nullable(t: PropertyTarget): boolean {
    return !(t.kind === 'base' && ALWAYS_SET.has(t.field));
  }

  /** Whether the instance has data in a container. */
  hasData(id: ContainerId): Sql {
    if (!this.schema.stored(id)) return FALSE;
    return Sql.raw(`${this.container(id)}.instance_id IS NOT NULL`);
  }

}

function kindOf(t: PropertyType): 'text' | 'number' | 'boolean' {
  const k = valueKind(t);
  return k === 'json' ? 'text' : k;
}
