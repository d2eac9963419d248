/**
 * External-id lists in query parameters (`?assetExternalIds=["a","b"]`): a JSON array in one parameter, as
 * the reference sends them. The counterpart of `parseIdList` (http/query-params.ts) for external ids.
 */
import { ExternalId } from '../http/common-schemas.js';
import { badRequest } from '../http/errors.js';

const MAX_LENGTH = ExternalId.maxLength!;

/** A JSON array of 1 to `maxItems` external ids, or undefined when the parameter is absent. */
export function parseExternalIdList(raw: string | undefined, name: string, maxItems: number): string[] | undefined {
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
    !parsed.every((x) => typeof x === 'string' && x.length <= MAX_LENGTH)
  ) {
    throw badRequest(
      `query parameter "${name}": expected a JSON array of 1 to ${maxItems} external ids of at most ${MAX_LENGTH} characters, such as ["a","b"]`,
    );
  }
  return parsed as string[];
}
