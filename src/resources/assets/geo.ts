/**
 * The nesting of GeoJSON `coordinates`, which depends on the geometry type. A schema union would report the
 * failure of whichever branch it tried first; checking by type names the actual problem.
 */
import { badRequest, formatPath } from '../../http/errors.js';
import type { GeoLocation, GeometryType } from './schema.js';

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

export function checkGeoLocation(geo: GeoLocation | null | undefined, path: Path): void {
  if (!geo) return;
  const { type, coordinates } = geo.geometry;
  const nesting = NESTING[type];
  if (!fits(coordinates, nesting.minItems)) {
    throw badRequest(`${formatPath([...path, 'geometry', 'coordinates'])}: a ${type} needs ${nesting.describe}`);
  }
}
