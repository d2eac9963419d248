/**
 * The property types a container declares (`{type: "text", list: true, collation: "en"}`, ...): the request
 * schema, the rules per type with their 400 messages, the canonical form the service keeps (defaults filled
 * in), and the read form clients get back.
 */
import { Type, type Static } from '@sinclair/typebox';
import { requireUnit } from '../units/catalog.js';
import { COLLATIONS, DEFAULT_COLLATION } from './collations.js';
import {
  ContainerReference,
  Description,
  ENUM_VALUE_PATTERN,
  InstanceExternalId,
  Name,
  RESERVED_ENUM_VALUES,
  containerRef,
  fail,
  type ContainerId,
  type Path,
  type ViewId,
  viewRef,
} from './identifiers.js';
import { DM_LIMITS } from './limits.js';

export const PROPERTY_TYPE_NAMES = [
  'text',
  'boolean',
  'int32',
  'int64',
  'float32',
  'float64',
  'timestamp',
  'date',
  'json',
  'timeseries',
  'file',
  'sequence',
  'direct',
  'enum',
] as const;
export type PropertyTypeName = (typeof PROPERTY_TYPE_NAMES)[number];

const EnumValueMetadata = Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) }, { additionalProperties: false });

/**
 * One object for every type, each field checked against the type by `normalizePropertyType`: a union of the
 * per-type shapes would make the schema validator's message name no branch in particular.
 */
export const PropertyTypeCreate = Type.Object(
  {
    type: Type.Union(PROPERTY_TYPE_NAMES.map((t) => Type.Literal(t))),
    list: Type.Optional(Type.Boolean()),
    maxListSize: Type.Optional(Type.Integer()),
    maxTextSize: Type.Optional(Type.Integer()),
    collation: Type.Optional(Type.String()),
    unit: Type.Optional(
      Type.Object({ externalId: InstanceExternalId, sourceUnit: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false }),
    ),
    container: Type.Optional(ContainerReference),
    values: Type.Optional(Type.Record(Type.String(), EnumValueMetadata)),
    unknownValue: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type PropertyTypeCreate = Static<typeof PropertyTypeCreate>;

export interface UnitReference {
  externalId: string;
  sourceUnit?: string;
}
export interface EnumValue {
  name?: string;
  description?: string;
}

type ListFields = { list: boolean; maxListSize?: number };

/** A property type as the service keeps it: `list` always given (but for enums), text always has a collation. */
export type PropertyType =
  | ({ type: 'text'; maxTextSize?: number; collation: string } & ListFields)
  | ({ type: 'float32' | 'float64'; unit?: UnitReference } & ListFields)
  | ({ type: 'boolean' | 'int32' | 'int64' | 'timestamp' | 'date' | 'json' } & ListFields)
  | ({ type: 'timeseries' | 'file' | 'sequence' } & ListFields)
  | ({ type: 'direct'; container?: ContainerId } & ListFields)
  | { type: 'enum'; values: Record<string, EnumValue>; unknownValue?: string };

export function isList(t: PropertyType): boolean {
  return t.type !== 'enum' && t.list;
}

/** The longest list a list property takes: its `maxListSize`, or the default for its type. */
export function listSizeLimit(t: PropertyType): number {
  if (t.type === 'enum') return 1;
  return t.maxListSize ?? (t.type === 'direct' ? DM_LIMITS.defaultDirectListSize : DM_LIMITS.defaultListSize);
}

/** The longest text value in UTF-8 bytes. */
export function textSizeLimit(t: PropertyType): number {
  return t.type === 'text' ? (t.maxTextSize ?? DM_LIMITS.textBytes) : DM_LIMITS.textBytes;
}

export const isNumericType = (t: PropertyType): boolean => ['int32', 'int64', 'float32', 'float64'].includes(t.type);
export const isFloatType = (t: PropertyType): boolean => t.type === 'float32' || t.type === 'float64';

const COLLATION_SET: ReadonlySet<string> = new Set(COLLATIONS);

/** Which fields each type may carry, beyond `type`. */
const FIELDS: Record<PropertyTypeName, readonly string[]> = {
  text: ['list', 'maxListSize', 'maxTextSize', 'collation'],
  float32: ['list', 'maxListSize', 'unit'],
  float64: ['list', 'maxListSize', 'unit'],
  boolean: ['list', 'maxListSize'],
  int32: ['list', 'maxListSize'],
  int64: ['list', 'maxListSize'],
  timestamp: ['list', 'maxListSize'],
  date: ['list', 'maxListSize'],
  json: ['list', 'maxListSize'],
  timeseries: ['list', 'maxListSize'],
  file: ['list', 'maxListSize'],
  sequence: ['list', 'maxListSize'],
  direct: ['list', 'maxListSize', 'container'],
  enum: ['values', 'unknownValue'],
};

/** Where a field that a type does not take belongs, for the message. */
const FIELD_OWNERS: Record<string, string> = {
  list: 'every type but enum',
  maxListSize: 'list properties',
  maxTextSize: 'text properties',
  collation: 'text properties',
  unit: 'float32 and float64 properties',
  container: 'direct relation properties',
  values: 'enum properties',
  unknownValue: 'enum properties',
};

/** The canonical form of a property type from its request form; a 400 naming the place when it is not valid. */
export function normalizePropertyType(raw: PropertyTypeCreate, path: Path): PropertyType {
  const allowed = FIELDS[raw.type];
  for (const key of Object.keys(raw)) {
    if (key !== 'type' && !allowed.includes(key)) {
      fail([...path, key], `not allowed for ${raw.type} properties (it applies to ${FIELD_OWNERS[key]})`);
    }
  }
  if (raw.type === 'enum') return normalizeEnum(raw, path);

  const list = raw.list ?? false;
  const base: ListFields = { list };
  if (raw.maxListSize !== undefined) {
    if (!list) fail([...path, 'maxListSize'], 'is only allowed when list is true');
    if (raw.maxListSize < 1 || raw.maxListSize > DM_LIMITS.maxListSize) {
      fail([...path, 'maxListSize'], `must be between 1 and ${DM_LIMITS.maxListSize}, got ${raw.maxListSize}`);
    }
    base.maxListSize = raw.maxListSize;
  }
  switch (raw.type) {
    case 'text': {
      const collation = raw.collation ?? DEFAULT_COLLATION;
      if (!COLLATION_SET.has(collation)) {
        fail([...path, 'collation'], `unknown collation ${JSON.stringify(collation)}: use "${DEFAULT_COLLATION}" or an ICU locale name such as "en-US"`);
      }
      const t: PropertyType = { type: 'text', ...base, collation };
      if (raw.maxTextSize !== undefined) {
        if (raw.maxTextSize < 1 || raw.maxTextSize > DM_LIMITS.textBytes) {
          fail([...path, 'maxTextSize'], `must be between 1 and ${DM_LIMITS.textBytes} bytes, got ${raw.maxTextSize}`);
        }
        t.maxTextSize = raw.maxTextSize;
      }
      return t;
    }
    case 'float32':
    case 'float64': {
      const t: PropertyType = { type: raw.type, ...base };
      if (raw.unit) {
        requireUnit(raw.unit.externalId, [...path, 'unit', 'externalId']);
        t.unit = raw.unit.sourceUnit === undefined ? { externalId: raw.unit.externalId } : { externalId: raw.unit.externalId, sourceUnit: raw.unit.sourceUnit };
      }
      return t;
    }
    case 'direct': {
      const t: PropertyType = { type: 'direct', ...base };
      if (raw.container) t.container = { space: raw.container.space, externalId: raw.container.externalId };
      return t;
    }
    default:
      return { type: raw.type, ...base };
  }
}

function normalizeEnum(raw: PropertyTypeCreate, path: Path): PropertyType {
  if (raw.values === undefined) fail(path, 'missing required property "values" (an enum lists its values)');
  const keys = Object.keys(raw.values);
  if (keys.length < 1 || keys.length > DM_LIMITS.enumValues) {
    fail([...path, 'values'], `must have between 1 and ${DM_LIMITS.enumValues} values, got ${keys.length}`);
  }
  const pattern = new RegExp(ENUM_VALUE_PATTERN);
  const values: Record<string, EnumValue> = {};
  for (const key of keys) {
    if (!pattern.test(key)) {
      fail([...path, 'values'], `the value ${JSON.stringify(key)} must be 1 to 128 letters, digits or underscores, not starting with a digit`);
    }
    if (RESERVED_ENUM_VALUES.has(key)) fail([...path, 'values'], `the value ${JSON.stringify(key)} is reserved`);
    values[key] = { ...raw.values[key] };
  }
  const t: PropertyType = { type: 'enum', values };
  if (raw.unknownValue !== undefined) {
    if (!Object.hasOwn(values, raw.unknownValue)) {
      fail([...path, 'unknownValue'], `${JSON.stringify(raw.unknownValue)} is not one of the enum's values (${keys.map((k) => JSON.stringify(k)).join(', ')})`);
    }
    t.unknownValue = raw.unknownValue;
  }
  return t;
}

/** The type as clients read it; a direct relation read through a view carries that view's `source` hint. */
export function propertyTypeReadForm(t: PropertyType, source?: ViewId): Record<string, unknown> {
  if (t.type === 'enum') {
    const out: Record<string, unknown> = { type: 'enum', values: structuredClone(t.values) };
    if (t.unknownValue !== undefined) out.unknownValue = t.unknownValue;
    return out;
  }
  const out: Record<string, unknown> = { type: t.type, list: t.list };
  if (t.maxListSize !== undefined) out.maxListSize = t.maxListSize;
  if (t.type === 'text') {
    if (t.maxTextSize !== undefined) out.maxTextSize = t.maxTextSize;
    out.collation = t.collation;
  }
  if ((t.type === 'float32' || t.type === 'float64') && t.unit) out.unit = { ...t.unit };
  if (t.type === 'direct') {
    if (t.container) out.container = containerRef(t.container);
    if (source) out.source = viewRef(source);
  }
  return out;
}

/** Two types are the same type: same kind, list-ness, collation, target container, unit and enum values. */
export function sameStorageType(a: PropertyType, b: PropertyType): boolean {
  return JSON.stringify(storageShape(a)) === JSON.stringify(storageShape(b));
}

/** The parts of a type that decide how values are stored and compared (not the size bounds). */
function storageShape(t: PropertyType): unknown {
  switch (t.type) {
    case 'enum':
      return ['enum', Object.keys(t.values).sort()];
    case 'text':
      return ['text', t.list, t.collation];
    case 'float32':
    case 'float64':
      return [t.type, t.list, t.unit?.externalId ?? null];
    case 'direct':
      return ['direct', t.list, t.container ? [t.container.space, t.container.externalId] : null];
    default:
      return [t.type, t.list];
  }
}
