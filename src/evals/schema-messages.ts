/**
 * Turns Ajv's errors into messages a person editing a suite file can act on: the place in the document,
 * and what was expected there instead of what was found.
 */
import type { AnySchemaObject, ErrorObject } from 'ajv';
import type { DocumentProblem, PathSegment } from './diagnostics.js';
import { plural } from './wording.js';

export function describeSchemaErrors(
  errors: readonly ErrorObject[],
  data: unknown,
  schemaRoot: AnySchemaObject,
): DocumentProblem[] {
  const problems: DocumentProblem[] = [];
  for (const error of errors) {
    const problem = describe(error, pointerToPath(error.instancePath, data), schemaRoot);
    if (problem) problems.push(problem);
  }
  return problems;
}

function describe(error: ErrorObject, path: PathSegment[], schemaRoot: AnySchemaObject): DocumentProblem | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const allowed = Object.keys((error.parentSchema?.properties as object | undefined) ?? {});
      const key = String(params.additionalProperty);
      return { path, key, message: `unknown property ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})` };
    }
    case 'required':
      return { path, message: `missing required property ${JSON.stringify(params.missingProperty)}` };
    case 'type':
      return { path, message: `expected ${describeType(String(params.type))}, got ${describeValue(error.data)}` };
    case 'minLength':
      return { path, message: `expected at least ${plural(Number(params.limit), 'character')}, got ${describeValue(error.data)}` };
    case 'minItems':
      return { path, message: `expected at least ${plural(Number(params.limit), 'item')}, got ${describeValue(error.data)}` };
    case 'discriminator':
      return describeDiscriminator(error, path, schemaRoot);
    default:
      return { path, message: `does not match the suite schema (rule "${error.keyword}" at ${error.schemaPath})` };
  }
}

/** The shape of an object is chosen by one of its properties (a scorer's `type`); name the choices. */
function describeDiscriminator(
  error: ErrorObject,
  path: PathSegment[],
  schemaRoot: AnySchemaObject,
): DocumentProblem | undefined {
  const { tag, tagValue } = error.params as { tag: string; tagValue: unknown };
  // A missing tag is already reported by `required`.
  if (tagValue === undefined) return undefined;
  const branches = (error.parentSchema?.oneOf as AnySchemaObject[] | undefined) ?? [];
  const choices = branches.map((branch) => resolveLocalRef(schemaRoot, branch).properties?.[tag]?.const as string);
  const message =
    typeof tagValue === 'string'
      ? `unknown value ${JSON.stringify(tagValue)} (expected one of: ${choices.join(', ')})`
      : `expected one of: ${choices.join(', ')}, got ${describeValue(tagValue)}`;
  return { path: [...path, tag], message };
}

function resolveLocalRef(root: AnySchemaObject, schema: AnySchemaObject): AnySchemaObject {
  if (typeof schema.$ref !== 'string' || !schema.$ref.startsWith('#/')) return schema;
  let node: unknown = root;
  for (const part of schema.$ref.slice(2).split('/')) node = (node as Record<string, unknown>)[decodePointer(part)];
  return node as AnySchemaObject;
}

/** Ajv reports array indices as strings; the data tells whether a segment indexes an array. */
function pointerToPath(pointer: string, data: unknown): PathSegment[] {
  const path: PathSegment[] = [];
  let node = data;
  for (const part of pointer === '' ? [] : pointer.slice(1).split('/')) {
    const segment = decodePointer(part);
    const index = Array.isArray(node) ? Number(segment) : undefined;
    path.push(index ?? segment);
    node = index === undefined ? (node as Record<string, unknown>)[segment] : (node as unknown[])[index];
  }
  return path;
}

function decodePointer(part: string): string {
  return part.replace(/~1/g, '/').replace(/~0/g, '~');
}

const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping (object)',
  array: 'a list (array)',
  string: 'a string',
  boolean: 'true or false',
};

function describeType(type: string): string {
  return TYPE_NAMES[type] ?? type;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : `a list of ${plural(value.length, 'item')}`;
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return value === '' ? 'an empty string' : `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}
