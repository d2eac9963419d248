/**
 * A record's properties as its row keeps them: one document `{space: {container: {property: value}}}`, each
 * value in the form a container's column holds it (models/container-tables.ts `toColumn`), so that the
 * filter compiler compares document fields exactly as it compares columns. Writing checks each value
 * against its container property as an instance write does (models/values.ts), and fills in defaults;
 * reading turns the selected values back into the form clients read, in the units asked for.
 */
import { ApiError } from '../../http/errors.js';
import { fromColumn, toColumn } from '../models/container-tables.js';
import type { ContainerDefinition } from '../models/containers.js';
import { requireRecordContainer, type FilterSchema } from '../models/filter.js';
import { containerKey, fail, missingContainers, type ContainerId, type Path } from '../models/identifiers.js';
import { requiredMissing, valuesForNewData } from '../models/instance-writes.js';
import { renderValue, normalizePropertyValue, type StoredValue } from '../models/values.js';
import type { UnitConversion } from '../units/conversion.js';
import type { RecordWriteItem } from './schema.js';

export type RecordDocument = Record<string, Record<string, Record<string, unknown>>>;

/** A record checked and ready to write: its document (JSON text) and the document's size in bytes. */
export interface RecordDraft {
  space: string;
  externalId: string;
  doc: string;
  size: number;
}

/** The containers the request's records write to, which must exist (as the principal sees them) and be record containers. */
export function writtenContainers(items: readonly RecordWriteItem[], schema: FilterSchema): void {
  const missing = new Map<string, ContainerId>();
  items.forEach((item, i) =>
    item.sources.forEach((s, j) => {
      const container = schema.container(s.source);
      if (!container) missing.set(containerKey(s.source), { space: s.source.space, externalId: s.source.externalId });
      else requireRecordContainer(container, ['items', i, 'sources', j, 'source']);
    }),
  );
  if (missing.size > 0) throw missingContainers([...missing.values()]);
}

/** One record of a write request as its row keeps it; a 400 naming the place of a value that does not fit. */
export function draftRecord(item: RecordWriteItem, schema: FilterSchema, path: Path): RecordDraft {
  const doc: RecordDocument = {};
  const seen = new Set<string>();
  item.sources.forEach((s, j) => {
    const where = [...path, 'sources', j];
    const key = containerKey(s.source);
    if (seen.has(key)) fail([...where, 'source'], `the container ${key} is given twice in this record; give each container's properties once`);
    seen.add(key);
    const container = schema.container(s.source)!;
    const values: Record<string, StoredValue | null> = {};
    for (const [p, v] of Object.entries(s.properties)) {
      if (!Object.hasOwn(container.properties, p)) fail([...where, 'properties', p], `the container ${key} has no property ${JSON.stringify(p)}`);
      values[p] = normalizePropertyValue(v, container.properties[p], [...where, 'properties', p]);
    }
    const missing = requiredMissing(container, values);
    if (missing.length > 0) fail([...where, 'properties'], `the container ${key} requires ${missing.map((m) => JSON.stringify(m)).join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not given`);
    const stored: Record<string, unknown> = {};
    for (const [p, v] of Object.entries(valuesForNewData(container, values))) {
      if (v !== null) stored[p] = toColumn(v, container.properties[p].type);
    }
    (doc[container.space] ??= {})[container.externalId] = stored;
  });
  const text = JSON.stringify(doc);
  return { space: item.space, externalId: item.externalId, doc: text, size: Buffer.byteLength(text) };
}

/** The properties a read returns of one container, and the conversions of those with a target unit. */
export interface SelectedContainer {
  id: ContainerId;
  definition: ContainerDefinition;
  /** Every property when absent (`["*"]`). */
  properties?: ReadonlySet<string>;
  units: ReadonlyMap<string, UnitConversion>;
}

const convert = (v: StoredValue, c: UnitConversion): StoredValue => (Array.isArray(v) ? (v as number[]).map((x) => c.value(x)) : c.value(v as number));

/** The `properties` of a record as a read answers them: the selected containers it has data in. */
export function renderProperties(docText: string | null, selected: readonly SelectedContainer[]): RecordDocument {
  const out: RecordDocument = {};
  if (docText === null || selected.length === 0) return out;
  const doc = JSON.parse(docText) as RecordDocument;
  for (const s of selected) {
    const data = doc[s.id.space]?.[s.id.externalId];
    if (data === undefined) continue;
    const props: Record<string, unknown> = {};
    // In the container's order of properties, whatever order the store keeps a document's members in.
    for (const [p, def] of Object.entries(s.definition.properties)) {
      if (!Object.hasOwn(data, p) || (s.properties && !s.properties.has(p))) continue;
      const value = fromColumn(data[p], def.type);
      if (value === null) continue;
      const unit = s.units.get(p);
      props[p] = renderValue(unit ? convert(value, unit) : value, def.type);
    }
    (out[s.id.space] ??= {})[s.id.externalId] = props;
  }
  return out;
}

/**
 * The answer to a request that names a record of a mutable stream more than once: 422, as the reference
 * answers it, listing each such record once.
 */
export function duplicatedRecords(keys: ReadonlyArray<{ space: string; externalId: string }>) {
  return new ApiError(422, `The request names the same record more than once: ${keys.map((k) => `${k.space}:${k.externalId}`).join(', ')}`, {
    duplicated: keys.map((k) => ({ space: k.space, externalId: k.externalId })),
  });
}
