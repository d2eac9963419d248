/**
 * Records as SQL: the data modeling filter compiler (models/instance-sql.ts `FilterSql`) over the records
 * table, where a record's own fields are columns and a container property is a field of its document.
 */
import type { Dialect } from '../../storage/dialect.js';
import { Sql } from '../../storage/sql.js';
import { valueKind } from '../models/container-tables.js';
import type { DmLeaf, PropertyTarget } from '../models/filter.js';
import type { ContainerId } from '../models/identifiers.js';
import { FilterSql } from '../models/instance-sql.js';
import { isList } from '../models/property-types.js';

const FIELDS: Record<string, string> = { space: 'space', externalId: 'external_id', createdTime: 'created_time', lastUpdatedTime: 'last_updated_time' };

export class RecordSql extends FilterSql {
  private readonly doc: Sql;

  constructor(
    readonly dialect: Dialect,
    readonly alias = 'r',
  ) {
    super();
    this.doc = Sql.raw(`${alias}.doc`);
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
