/**
 * The units catalog operations. The catalog is the same public data in every project, so, as in the
 * reference, reading it needs no capability: any principal that may address the project may read it.
 */
import { missingItems } from '../../http/errors.js';
import { JsonText } from '../../http/json-text.js';
import { route, type ApiRoute } from '../../http/route.js';
import { rejectDuplicateRefs } from '../../query/refs.js';
import { unitCatalog } from './catalog.js';
import { UnitParams, UnitsByIdsBody, type Unit } from './schema.js';

// The catalog does not change while the server runs: the two lists are rendered once.
const unitList = new JsonText(JSON.stringify({ items: unitCatalog.units }));
const systemList = new JsonText(JSON.stringify({ items: unitCatalog.systems }));

/** The units named, in request order; unknown ones are a 400 with `missing` unless they are to be ignored. */
function unitsByIds(externalIds: readonly string[], ignoreUnknownIds: boolean): { items: Unit[] } {
  const found = externalIds.map((x) => unitCatalog.unit(x));
  const missing = externalIds.filter((_, i) => found[i] === undefined);
  if (missing.length && !ignoreUnknownIds) throw missingItems(missing.map((externalId) => ({ externalId })));
  return { items: found.filter((u): u is Unit => u !== undefined) };
}

export const unitRoutes: ApiRoute[] = [
  route({
    method: 'GET',
    path: '/units',
    capability: null,
    handler: () => unitList,
  }),
  route({
    method: 'POST',
    path: '/units/byids',
    capability: null,
    body: UnitsByIdsBody,
    handler: ({ body }) => {
      rejectDuplicateRefs(body.items);
      return unitsByIds(
        body.items.map((r) => r.externalId),
        body.ignoreUnknownIds ?? false,
      );
    },
  }),
  route({
    method: 'GET',
    path: '/units/systems',
    capability: null,
    handler: () => systemList,
  }),
  route({
    method: 'GET',
    path: '/units/:externalId',
    capability: null,
    params: UnitParams,
    handler: ({ params }) => unitsByIds([params.externalId], false),
  }),
];
