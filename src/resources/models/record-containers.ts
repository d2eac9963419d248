/**
 * Containers for records (`usedFor: "record"`): they type the records of streams (resources/streams) and serve
 * neither nodes nor edges. What the reference leaves out of such a container is refused, naming it: indexes
 * and constraints (records are filtered without them), immutable and auto-incremented properties (a record
 * is immutable or not by its stream), references to time series, files and sequences, a direct relation's
 * required container, and collations other than the default (records compare text by code point).
 */
import type { ContainerCreate } from './container-schema.js';
import { DEFAULT_COLLATION } from './collations.js';
import { fail, type Path } from './identifiers.js';

const NOT_FOR_RECORDS: ReadonlySet<string> = new Set(['timeseries', 'file', 'sequence']);

/** A 400 naming the first part of a record container that records do not take. */
export function checkRecordContainer(raw: ContainerCreate, path: Path): void {
  for (const key of ['constraints', 'indexes'] as const) {
    if (Object.keys(raw[key] ?? {}).length > 0) fail([...path, key], `a record container has no ${key}`);
  }
  for (const [id, p] of Object.entries(raw.properties)) {
    const where = [...path, 'properties', id];
    if (p.immutable) fail([...where, 'immutable'], 'records are immutable or not by their stream; a record container property cannot be immutable');
    if (p.autoIncrement) fail([...where, 'autoIncrement'], 'record container properties are not auto-incremented');
    if (NOT_FOR_RECORDS.has(p.type.type)) fail([...where, 'type', 'type'], `a record container cannot hold ${p.type.type} references`);
    if (p.type.container !== undefined) fail([...where, 'type', 'container'], "a record's direct relation names no required container");
    if (p.type.collation !== undefined && p.type.collation !== DEFAULT_COLLATION) {
      fail([...where, 'type', 'collation'], `records compare text by code point; a record container property takes no collation but "${DEFAULT_COLLATION}"`);
    }
  }
}
