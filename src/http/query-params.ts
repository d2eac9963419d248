/**
 * Query-parameter forms shared by the GET list operations.
 */
import { MAX_SAFE_ID } from './common-schemas.js';
import { badRequest } from './errors.js';

/** A JSON array of ids in a query parameter, such as `assetIds=[1,2,3]`. */
export function parseIdList(raw: string | undefined, name: string, maxItems: number): number[] | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length < 1 ||
    parsed.length > maxItems ||
    !parsed.every((x) => Number.isInteger(x) && x >= 1 && x <= MAX_SAFE_ID)
  ) {
    throw badRequest(`query parameter "${name}": expected a JSON array of 1 to ${maxItems} ids, such as [1,2,3]`);
  }
  return parsed as number[];
}
