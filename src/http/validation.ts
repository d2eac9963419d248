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

const PART_NAMES: Record<string, string> = {
  body: 'request body',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  const validate = ajv.compile(schema as object) as ValidateFunction;
  return (data: unknown) => {
    if (validate(data)) return { value: data };
    return { error: toApiError(validate.errors ?? [], httpPart ?? 'body') };
  };
};

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
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
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
    case 'const': {
      // A union of literals fails in each branch, then as a whole (`anyOf`): name every allowed value.
      const union = errors.find((e) => e.keyword === 'anyOf' && e.instancePath === error.instancePath);
      const branches = (union?.schema as Array<{ const?: unknown }> | undefined) ?? [];
      const allowed = branches.length && branches.every((b) => 'const' in b) ? branches.map((b) => b.const) : [p.allowedValue];
      return badRequest(`${location()}: must be ${allowed.length > 1 ? 'one of ' : ''}${allowed.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(data)}`);
    }
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
