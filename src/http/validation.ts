/**
 * Request validation: schemas (TypeBox, i.e. JSON Schema) compiled by Ajv, with failures turned into a 400
 * whose message names the property and what was wrong (`items[3].type: expected string`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError, badRequest, formatPath, pointerToSegments } from './errors.js';

const common = { allErrors: false, useDefaults: true, removeAdditional: false, verbose: true, strict: false } as const;
const strictAjv = new Ajv({ ...common, coerceTypes: false });
// Query strings and path parameters arrive as text; they are coerced to the schema's types.
const coercingAjv = new Ajv({ ...common, coerceTypes: 'array' });

/**
 * The keyword of an object schema whose number and boolean values are taken as their text (`3` as "3",
 * `true` as "true") before the object's own rules run, so those rules (types, lengths) judge the text. The
 * official Python SDK sends metadata values as the caller gave them, integers included. Other values are
 * left for the rules to judge.
 */
export const SCALARS_AS_TEXT = 'scalarsAsText';

function scalarsAsText(data: unknown): boolean {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return true;
  const map = data as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    const value = map[key];
    if (typeof value === 'number' || typeof value === 'boolean') map[key] = String(value);
  }
  return true;
}

// A keyword without a type runs before the object keywords (patternProperties, additionalProperties).
for (const ajv of [strictAjv, coercingAjv]) {
  ajv.addKeyword({ keyword: SCALARS_AS_TEXT, schemaType: 'boolean', modifying: true, errors: false, compile: (on: boolean) => (on ? scalarsAsText : () => true) });
}

const PART_NAMES: Record<string, string> = {
  body: 'request body',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  const validate = ajv.compile(schema as object) as ValidateFunction;
  const normalize = httpPart === 'querystring' ? queryNormalizer(schema as object) : undefined;
  return (data: unknown) => {
    normalize?.(data as Record<string, unknown>);
    if (validate(data)) return { value: data };
    return { error: toApiError(validate.errors ?? [], httpPart ?? 'body') };
  };
};

/** The fixed string values a schema allows (`enum`, or a union of string literals), if it is one of those. */
function fixedStrings(schema: { enum?: unknown[]; anyOf?: Array<{ const?: unknown }> }): string[] | undefined {
  const values = schema.enum ?? (schema.anyOf?.every((b) => 'const' in b) ? schema.anyOf.map((b) => b.const) : undefined);
  return values?.every((v) => typeof v === 'string') ? (values as string[]) : undefined;
}

/**
 * Query values as clients spell them, before validation: fixed values in any letter case (`status=READY`
 * for `ready`) and booleans as `True`/`False` (Python's spelling). Each becomes the schema's own spelling;
 * anything else is left for validation to judge.
 */
function queryNormalizer(schema: { properties?: Record<string, { type?: string; enum?: unknown[]; anyOf?: Array<{ const?: unknown }> }> }) {
  const canonical = new Map<string, Map<string, string>>();
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const values = property.type === 'boolean' ? ['true', 'false'] : fixedStrings(property);
    if (values) canonical.set(name, new Map(values.map((v) => [v.toLowerCase(), v])));
  }
  if (canonical.size === 0) return undefined;
  return (query: Record<string, unknown>) => {
    for (const [name, values] of canonical) {
      const given = query[name];
      if (typeof given !== 'string') continue;
      const value = values.get(given.toLowerCase());
      if (value !== undefined) query[name] = value;
    }
  };
}

/** Compiles a schema for use outside a route (for example a nested part validated by a service). */
export function compileBodyValidator<T>(schema: object): (data: unknown, where?: string) => T {
  const validate = strictAjv.compile(schema) as ValidateFunction;
  return (data, where = 'body') => {
    if (!validate(data)) throw toApiError(validate.errors ?? [], where);
    return data as T;
  };
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number';
  // Integers beyond ±(2^53 − 1) of a body read exactly (ApiRoute.exactIntegers).
  if (typeof v === 'bigint') return `${v}, an integer beyond the range allowed here`;
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** What the branches of a union take: its literal values, or `an array`, `a string`, ... */
function describeUnion(branches: object[]): string {
  const literals = branches.every((b) => 'const' in b);
  const parts = [
    ...new Set(
      branches.map((b) => {
        if ('const' in b) return JSON.stringify(b.const);
        const type = (b as { type?: unknown }).type;
        return typeof type === 'string' ? `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}` : 'a value of another form';
      }),
    ),
  ];
  if (literals && parts.length > 1) return `one of ${parts.join(', ')}`;
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}` : parts[0];
}

function toApiError(errors: ErrorObject[], httpPart: string): ApiError {
  const error = errors[0];
  if (!error) return badRequest('invalid request');
  // A key failing `propertyNames` reports the key's own failure first; say it is about the key.
  const names = errors.find((e) => e.keyword === 'propertyNames');
  const segments = pointerToSegments(error.instancePath);
  const inQuery = httpPart === 'querystring' || httpPart === 'params' || httpPart === 'headers';
  const location = (extra: string[] = []) => {
    const all = [...segments, ...extra];
    if (inQuery) return `${PART_NAMES[httpPart]} ${all.length ? `"${formatPath(all)}"` : ''}`.trim();
    return all.length ? formatPath(all) : (PART_NAMES[httpPart] ?? httpPart);
  };
  const p = error.params as Record<string, unknown>;
  const data = error.data;
  if (names) {
    const key = JSON.stringify((names.params as { propertyName: string }).propertyName);
    return error.keyword === 'maxLength'
      ? badRequest(`${location()}: key ${key.length > 40 ? key.slice(0, 37) + '..."' : key} is longer than ${p.limit} characters`)
      : badRequest(`${location()}: key ${key} is not allowed`);
  }
  // A value that fits no branch of a union fails in each branch, then as a whole (`anyOf`): when it has the
  // wrong type or value for every branch, name what each branch takes. (When a branch has its type but not
  // its contents, the first branch's own message says more.)
  const union = errors.find((e) => e.keyword === 'anyOf' && e.instancePath === error.instancePath);
  const byBranch = union ? errors.slice(0, errors.indexOf(union)) : [];
  if (union && data !== null && byBranch.every((e) => e.instancePath === union.instancePath && (e.keyword === 'type' || e.keyword === 'const'))) {
    return badRequest(`${location()}: must be ${describeUnion(union.schema as object[])}, got ${JSON.stringify(data)}`);
  }
  switch (error.keyword) {
    case 'required':
      return badRequest(
        inQuery
          ? `${location([String(p.missingProperty)])}: is required`
          : `${location()}: missing required property "${String(p.missingProperty)}"`,
      );
    case 'additionalProperties': {
      const allowed = Object.keys((error.parentSchema as { properties?: object })?.properties ?? {});
      return badRequest(
        `${location()}: unknown property "${String(p.additionalProperty)}"${allowed.length ? ` (allowed: ${allowed.join(', ')})` : ''}`,
      );
    }
    case 'type':
      if (data === null) return badRequest(`${location()}: null is not allowed`);
      return badRequest(`${location()}: expected ${p.type}, got ${describeType(data)}`);
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return badRequest(`${location()}: ${error.message}, got ${JSON.stringify(data)}`);
    case 'minItems':
      return badRequest(`${location()}: must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}, got ${(data as unknown[]).length}`);
    case 'maxItems':
      return badRequest(`${location()}: must have at most ${p.limit} items, got ${(data as unknown[]).length}`);
    case 'minLength':
      return badRequest(`${location()}: must be at least ${p.limit} character${p.limit === 1 ? '' : 's'} long`);
    case 'maxLength':
      return badRequest(`${location()}: must be at most ${p.limit} characters long, got ${(data as string).length}`);
    case 'maxProperties':
      return badRequest(`${location()}: must have at most ${p.limit} keys`);
    case 'propertyNames':
      return badRequest(`${location()}: key ${JSON.stringify(p.propertyName)} is not allowed: ${error.message ?? ''}`.trim());
    case 'const':
      return badRequest(`${location()}: must be ${JSON.stringify(p.allowedValue)}, got ${JSON.stringify(data)}`);
    case 'enum':
      return badRequest(
        `${location()}: must be one of ${((p.allowedValues as unknown[]) ?? []).map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(data)}`,
      );
    case 'uniqueItems':
      return badRequest(`${location()}: must not contain duplicates (items ${p.j} and ${p.i} are equal)`);
    case 'pattern':
      return badRequest(`${location()}: ${JSON.stringify(data)} does not have the expected format`);
    default:
      return badRequest(`${location()}: ${error.message ?? 'is invalid'}`);
  }
}

/** A JSON object: not null, not an array. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
