/**
 * A sequence's columns: made from their definitions, changed by `update.columns` (`modify`, then `remove`,
 * then `add`, so a request may remove a column and add another by the same external id), and held to the
 * limits: at most 400 columns, 400 of them numeric and 200 of type STRING, the columns removed from the
 * sequence counting towards each (as the reference counts them).
 */
import { badRequest, formatPath } from '../../http/errors.js';
import { applyMetadataPatch, applyNullablePatch, checkMetadata, type MapPatch, type NullablePatch } from '../../http/patch.js';
import type { Values } from '../../storage/items.js';
import { SEQUENCE_LIMITS, SEQUENCE_METADATA_LIMITS, ValueTypes, type Column, type ColumnCreate, type ColumnsPatch, type ValueType } from './model.js';

type Path = Array<string | number>;

/** The value type a definition names (DOUBLE when it names none), or a 400 naming it. */
function valueTypeOf(def: ColumnCreate, path: Path): ValueType {
  if (def.valueType === undefined) return 'DOUBLE';
  const upper = def.valueType.toUpperCase();
  if (!(ValueTypes as readonly string[]).includes(upper)) {
    throw badRequest(`${formatPath([...path, 'valueType'])}: expected one of ${ValueTypes.join(', ')}, got ${JSON.stringify(def.valueType)}`);
  }
  return upper as ValueType;
}

/** A column with its fields in the order the reference answers them, those without a value left out. */
function column(c: Omit<Column, 'name' | 'description'> & { name?: string | null; description?: string | null }): Column {
  return {
    id: c.id,
    externalId: c.externalId,
    ...(c.name != null ? { name: c.name } : {}),
    ...(c.description != null ? { description: c.description } : {}),
    valueType: c.valueType,
    metadata: c.metadata,
    createdTime: c.createdTime,
    lastUpdatedTime: c.lastUpdatedTime,
  };
}

/** A new column numbered `id`, checked. */
function newColumn(def: ColumnCreate, id: number, now: number, path: Path): Column {
  checkMetadata(def.metadata, [...path, 'metadata'], SEQUENCE_METADATA_LIMITS);
  const { externalId, name, description } = def;
  return column({ id, externalId, name, description, valueType: valueTypeOf(def, path), metadata: def.metadata ?? {}, createdTime: now, lastUpdatedTime: now });
}

/** The columns of a new sequence, numbered from 1 and checked against the limits (`path` names the definitions). */
export function createColumns(defs: readonly ColumnCreate[], now: number, path: Path): Column[] {
  const columns = defs.map((def, i) => newColumn(def, i + 1, now, [...path, i]));
  requireDistinct(columns, (i) => [...path, i, 'externalId']);
  checkColumnLimits(columns, 0, path);
  return columns;
}

function requireDistinct(columns: readonly Column[], where: (index: number) => Path): void {
  const seen = new Set<string>();
  for (const [i, c] of columns.entries()) {
    if (seen.has(c.externalId)) throw badRequest(`${formatPath(where(i))}: more than one column has the external id ${JSON.stringify(c.externalId)}`);
    seen.add(c.externalId);
  }
}

/** Refuses columns beyond a limit, naming it; `removed` columns count towards every limit. */
export function checkColumnLimits(columns: readonly Column[], removed: number, path: Path): void {
  const strings = columns.filter((c) => c.valueType === 'STRING').length;
  const limits: Array<[string, number, number]> = [
    ['', columns.length, SEQUENCE_LIMITS.columns],
    ['numeric (DOUBLE and LONG) ', columns.length - strings, SEQUENCE_LIMITS.numericColumns],
    ['STRING ', strings, SEQUENCE_LIMITS.stringColumns],
  ];
  for (const [kind, count, max] of limits) {
    if (count + removed <= max) continue;
    const counted = removed ? `${count}, and the ${removed} columns removed from it count towards the limit` : String(count);
    throw badRequest(`${formatPath(path)}: a sequence has at most ${max} ${kind}columns; this one would have ${counted}`);
  }
}

/** The number a column added now gets: one more than every column the sequence ever had. */
function nextColumnId(columns: readonly Column[], removed: number): number {
  return columns.length + removed + 1;
}

function indexOfColumn(columns: readonly Column[], externalId: string, path: Path): number {
  const i = columns.findIndex((c) => c.externalId === externalId);
  if (i < 0) throw badRequest(`${formatPath(path)}: the sequence has no column ${JSON.stringify(externalId)}`);
  return i;
}

/**
 * Applies `update.columns` to the sequence's values `v` (its `columns` and `columnsRemoved`); `path` names
 * `update.columns` in messages.
 */
export function applyColumnsPatch(v: Values, patch: ColumnsPatch, path: Path, now: number): void {
  const columns = [...(v.columns as Column[])];
  let removed = v.columnsRemoved as number;
  for (const [i, { externalId, update }] of (patch.modify ?? []).entries()) {
    const at = [...path, 'modify', i];
    const index = indexOfColumn(columns, externalId, [...at, 'externalId']);
    const current = columns[index];
    const renamed = update.externalId?.set ?? current.externalId;
    if (renamed !== current.externalId && columns.some((c) => c.externalId === renamed)) {
      throw badRequest(`${formatPath([...at, 'update', 'externalId', 'set'])}: the sequence already has a column ${JSON.stringify(renamed)}`);
    }
    const text = (key: 'name' | 'description') => applyNullablePatch<string>(current[key] ?? null, update[key] as NullablePatch<string> | undefined, [...at, 'update', key]);
    const metadata = update.metadata ? applyMetadataPatch(current.metadata, update.metadata as MapPatch, [...at, 'update', 'metadata'], SEQUENCE_METADATA_LIMITS) : current.metadata;
    columns[index] = column({ ...current, externalId: renamed, name: text('name'), description: text('description'), metadata: metadata ?? {}, lastUpdatedTime: now });
  }
  for (const [i, ref] of (patch.remove ?? []).entries()) {
    const externalId = typeof ref === 'string' ? ref : ref.externalId;
    columns.splice(indexOfColumn(columns, externalId, [...path, 'remove', i]), 1);
    removed++;
  }
  const first = nextColumnId(columns, removed);
  for (const [i, def] of (patch.add ?? []).entries()) {
    const at = [...path, 'add', i];
    if (columns.some((c) => c.externalId === def.externalId)) {
      throw badRequest(`${formatPath([...at, 'externalId'])}: the sequence already has a column ${JSON.stringify(def.externalId)}`);
    }
    columns.push(newColumn(def, first + i, now, at));
  }
  if (columns.length === 0) throw badRequest(`${formatPath(path)}: a sequence keeps at least one column`);
  checkColumnLimits(columns, removed, path);
  v.columns = columns;
  v.columnsRemoved = removed;
}
