/**
 * Records as SQL: the data modeling filter compiler (models/instance-sql.ts `FilterSql`) over the records
 * table, where a record's own fields are columns and a container property is a field of its document; and
 * the records of a stream that one caller reads: those of the spaces its `streamRecordsAcl` reaches.
 */
import type { Access } from '../../auth/access.js';
import type { Dialect } from '../../storage/dialect.js';
import { Sql, sql } from '../../storage/sql.js';
import { valueKind } from '../models/container-tables.js';
import type { DmLeaf, PropertyTarget } from '../models/filter.js';
import type { ContainerId } from '../models/identifiers.js';
import { FilterSql } from '../models/instance-sql.js';
import { isList } from '../models/property-types.js';
import { spaceCondition } from '../models/space-access.js';

const FIELDS: Record<string, string> = { space: 'space', externalId: 'external_id', createdTime: 'created_time', lastUpdatedTime: 'last_updated_time' };

export class RecordSql extends FilterSql {
  private readonly doc: Sql;

  constructor(
    readonly dialect: Dialect,
    /** The caller's `streamRecordsAcl` scope; undefined (outside requests) is every space. */
    readonly access: Access | undefined,
    readonly alias = 'r',
  ) {
    super();
    this.doc = Sql.raw(`${alias}.doc`);
  }

  /** The rows of one stream (records and tombstones) in the spaces the caller reads. */
  ofStream(projectId: number, streamId: number): Sql[] {
    const space = spaceCondition(this.access, `${this.alias}.space`);
    return [sql`${this.field('project_id')} = ${projectId}`, sql`${this.field('stream_id')} = ${streamId}`, ...(space ? [space] : [])];
  }

  /** A column of the record's row. */
  field(name: string): Sql {
    return Sql.raw(`${this.alias}.${name}`);
  }

  column(t: PropertyTarget): Sql {
    if (t.kind === 'base') return this.field(FIELDS[t.field]);
    // Lists and json are kept as their JSON text, booleans as 0 and 1 (container-tables.ts).
    const kind = isList(t.type) || valueKind(t.type) === 'text' || valueKind(t.type) === 'json' ? 'text' : 'number';
    return this.dialect.documentField(this.doc, [t.container.space, t.container.externalId, t.property], kind);
  }

  hasData(id: ContainerId): Sql {
    return this.dialect.documentHas(this.doc, [id.space, id.externalId]);
  }

  protected graphLeaf(leaf: Extract<DmLeaf, { op: 'nested' | 'instanceReferences' }>): Sql {
    throw new Error(`records filters have no ${leaf.op} leaf (models/filter.ts refuses it)`);
  }
}
