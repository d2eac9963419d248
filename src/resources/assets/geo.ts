/**
 * Geography of assets: the nesting of GeoJSON `coordinates`, which depends on the geometry type (a schema
 * union would report the failure of whichever branch it tried first; checking by type names the actual
 * problem), and the `geoLocation` filter, whose relations storage/geometry.ts computes.
 */
import { badRequest, formatPath } from '../../http/errors.js';
import { propertyTarget } from '../../query/basic.js';
import type { LeafNode } from '../../query/filter.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { geoRelation, type Geometry } from './geometry.js';
import type { GeoFilter, GeoLocation, GeometryType } from './schema.js';
import { assetCatalog } from './model.js';

type Path = Array<string | number>;

/**
 * For each geometry type, the arrays around a position (`[x, y]`), outermost first, with the fewest
 * elements each must have. A Point's coordinates are a position itself.
 */
const NESTING: Record<GeometryType, { describe: string; minItems: number[] }> = {
  Point: { describe: 'a position [x, y]', minItems: [] },
  LineString: { describe: 'an array of at least 2 positions', minItems: [2] },
  Polygon: { describe: 'an array of rings, each an array of at least 2 positions', minItems: [1, 2] },
  MultiPoint: { describe: 'an array of positions', minItems: [0] },
  MultiLineString: { describe: 'an array of lines, each an array of at least 2 positions', minItems: [0, 2] },
  MultiPolygon: { describe: 'an array of polygons, each an array of rings of at least 2 positions', minItems: [0, 1, 2] },
};

function isPosition(v: unknown): boolean {
  return Array.isArray(v) && v.length === 2 && v.every((n) => typeof n === 'number' && Number.isFinite(n));
}

function fits(v: unknown, minItems: readonly number[]): boolean {
  if (minItems.length === 0) return isPosition(v);
  return Array.isArray(v) && v.length >= minItems[0] && v.every((el) => fits(el, minItems.slice(1)));
}

function checkGeometry({ type, coordinates }: { type: GeometryType; coordinates: unknown }, path: Path): void {
  const nesting = NESTING[type];
  if (!fits(coordinates, nesting.minItems)) {
    throw badRequest(`${formatPath([...path, 'coordinates'])}: a ${type} needs ${nesting.describe}`);
  }
}

export function checkGeoLocation(geo: GeoLocation | null | undefined, path: Path): void {
  if (geo) checkGeometry(geo.geometry, [...path, 'geometry']);
}

/**
 * The assets whose geometry stands in the filter's relation to its shape, computed here over the project's
 * located assets (there is no spatial index; the same code on either engine). Assets without a geoLocation
 * have no relation to any shape: no geographic filter matches them, DISJOINT included.
 */
export async function geoFilterNode(db: Queryable, projectId: number, filter: GeoFilter | undefined, path: Path): Promise<LeafNode | undefined> {
  if (!filter) return undefined;
  checkGeometry(filter.shape, [...path, 'shape']);
  const located = await db.all<{ id: number; geo: string }>(sql`SELECT id, geo_location AS geo FROM assets WHERE project_id = ${projectId} AND geo_location IS NOT NULL`);
  const shape = filter.shape as Geometry;
  const matching = located.filter((a) => geoRelation((JSON.parse(a.geo) as { geometry: Geometry }).geometry, filter.relation, shape)).map((a) => a.id);
  return { op: 'inSet', target: propertyTarget(assetCatalog, 'id'), ids: db.dialect.idList(matching) };
}
