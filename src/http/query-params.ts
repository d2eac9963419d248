/**
 * Query-parameter forms shared by the GET list operations: lists of ids or external ids sent as one JSON
 * array in one parameter (`assetIds=[1,2,3]`, `assetExternalIds=["a","b"]`), as the reference sends them,
 * and lists of strings sent either way (`sort=a&sort=b` or `sort=["a","b"]`).
 */
import { ExternalId, MAX_SAFE_ID } from './common-schemas.js';
import { badRequest } from './errors.js';

function parseJsonList<T>(raw: string | undefined, name: string, maxItems: number, isItem: (x: unknown) => x is T, what: string, example: string): T[] | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length < 1 || parsed.length > maxItems || !parsed.every(isItem)) {
    throw badRequest(`query parameter "${name}": expected a JSON array of 1 to ${maxItems} ${what}, such as ${example}`);
  }
  return parsed as T[];
}

// The lists name ids to filter on, where 0 names no item and matches nothing (see FilterId).
const isId = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0 && (x as number) <= MAX_SAFE_ID;
const MAX_EXTERNAL_ID = ExternalId.maxLength!;
const isExternalId = (x: unknown): x is string => typeof x === 'string' && x.length <= MAX_EXTERNAL_ID;

/** A JSON array of 1 to `maxItems` ids, or undefined when the parameter is absent. */
export function parseIdList(raw: string | undefined, name: string, maxItems: number): number[] | undefined {
  return parseJsonList(raw, name, maxItems, isId, 'ids', '[1,2,3]');
}

/**
 * A list of strings, given as repeated parameters or as one JSON array of strings (the official JavaScript
 * client sends every array parameter as JSON); undefined when the parameter is absent.
 */
export function parseStringList(raw: readonly string[] | undefined, name: string): string[] | undefined {
  if (raw === undefined) return undefined;
  return raw.flatMap((value) => {
    if (!value.startsWith('[')) return [value];
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = undefined;
    }
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) {
      throw badRequest(`query parameter "${name}": expected strings, or a JSON array of strings such as ["a","b"]`);
    }
    return parsed as string[];
  });
}

/** A JSON array of 1 to `maxItems` external ids, or undefined when the parameter is absent. */
export function parseExternalIdList(raw: string | undefined, name: string, maxItems: number): string[] | undefined {
  return parseJsonList(raw, name, maxItems, isExternalId, `external ids of at most ${MAX_EXTERNAL_ID} characters`, '["a","b"]');
}

/** A time range from a `min...`/`max...` pair of parameters, or undefined when neither is given. */
export function queryRange(min: number | undefined, max: number | undefined): { min?: number; max?: number } | undefined {
  return min === undefined && max === undefined ? undefined : { min, max };
}

/**
 * `assetSubtreeIds` and `assetSubtreeExternalIds`, which name subtrees in two forms, as the one list of
 * references of the filter; undefined when neither is given.
 */
export function parseSubtreeRefs(ids: string | undefined, externalIds: string | undefined, maxItems: number): Array<{ id: number } | { externalId: string }> | undefined {
  const refs = [
    ...(parseIdList(ids, 'assetSubtreeIds', maxItems) ?? []).map((id) => ({ id })),
    ...(parseExternalIdList(externalIds, 'assetSubtreeExternalIds', maxItems) ?? []).map((externalId) => ({ externalId })),
  ];
  return refs.length ? refs : undefined;
}
