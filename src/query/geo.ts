/**
 * Geography of items (assets, files): the `geoLocation` field, a GeoJSON feature, with the nesting of its
 * `coordinates` checked by geometry type (a schema union would report the failure of whichever branch it
 * tried first; checking by type names the actual problem), and the `geoLocation` filter, whose relations
 * geometry.ts computes.
 */
import { Type, type Static } from '@sinclair/typebox';
import { badRequest, formatPath } from '../http/errors.js';
import { sql, Sql } from '../storage/sql.js';
import type { Queryable } from '../storage/store.js';
import { propertyTarget } from './basic.js';
import type { ResourceCatalog } from './catalog.js';
import type { LeafNode } from './filter.js';
import { GEO_RELATIONS, geoRelation, type GeoRelation, type Geometry } from './geometry.js';

export type GeometryType = 'Point' | 'LineString' | 'Polygon' | 'MultiPoint' | 'MultiLineString' | 'MultiPolygon';
export const GeometryTypeSchema = Type.Unsafe<GeometryType>(
  Type.String({ enum: ['Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon'] }),
);

/** A GeoJSON feature; the nesting of `coordinates`, which depends on the type, is checked by checkGeoLocation. */
export const GeoLocation = Type.Object(
  {
    type: Type.Literal('Feature'),
    geometry: Type.Object({ type: GeometryTypeSchema, coordinates: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
    properties: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type GeoLocation = Static<typeof GeoLocation>;

/** The `geoLocation` filter: a relation to a shape (a geometry, MultiPoint aside). */
export const GeoFilter = Type.Object(
  {
    relation: Type.Unsafe<GeoRelation>(Type.String({ enum: [...GEO_RELATIONS] })),
    shape: Type.Object(
      {
        type: Type.Unsafe<Exclude<GeometryType, 'MultiPoint'>>(Type.String({ enum: ['Point', 'LineString', 'Polygon', 'MultiLineString', 'MultiPolygon'] })),
        coordinates: Type.Array(Type.Unknown()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type GeoFilter = Static<typeof GeoFilter>;

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
 * The items of `catalog` whose geometry (column `geo_location`) stands in the filter's relation to its shape,
 * computed here over the project's located items (there is no spatial index; the same code on either engine).
 * Items without a geoLocation have no relation to any shape: no geographic filter matches them, DISJOINT
 * included.
 */
export async function geoFilterNode(db: Queryable, catalog: ResourceCatalog, projectId: number, filter: GeoFilter | undefined, path: Path): Promise<LeafNode | undefined> {
  if (!filter) return undefined;
  checkGeometry(filter.shape, [...path, 'shape']);
  const located = await db.all<{ id: number; geo: string }>(
    sql`SELECT id, geo_location AS geo FROM ${Sql.raw(catalog.table)} WHERE project_id = ${projectId} AND geo_location IS NOT NULL`,
  );
  const shape = filter.shape as Geometry;
  const matching = located.filter((a) => geoRelation((JSON.parse(a.geo) as { geometry: Geometry }).geometry, filter.relation, shape)).map((a) => a.id);
  return { op: 'inSet', target: propertyTarget(catalog, 'id'), ids: db.dialect.idList(matching) };
}
