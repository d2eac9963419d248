/**
 * Relations between GeoJSON geometries for the geographic filter of items: does an item's geometry intersect
 * a shape, or lie within it. Coordinates are taken as x and y in a plane (no curvature of the earth), and a
 * boundary belongs to its polygon: a point on a polygon's edge intersects it and lies within it.
 */
type Position = readonly [number, number];
type Ring = readonly Position[];
type Segment = readonly [Position, Position];

export const GEO_RELATIONS = ['INTERSECTS', 'DISJOINT', 'WITHIN'] as const;
export type GeoRelation = (typeof GEO_RELATIONS)[number];

export interface Geometry {
  type: string;
  coordinates: unknown;
}

/** A geometry as its points, lines and polygons (each polygon its outer ring, then its holes). */
interface Parts {
  points: Position[];
  lines: Position[][];
  polygons: Ring[][];
}

function parts({ type, coordinates }: Geometry): Parts {
  const none: Parts = { points: [], lines: [], polygons: [] };
  const c = coordinates as never;
  switch (type) {
    case 'Point':
      return { ...none, points: [c] };
    case 'MultiPoint':
      return { ...none, points: c };
    case 'LineString':
      return { ...none, lines: [c] };
    case 'MultiLineString':
      return { ...none, lines: c };
    case 'Polygon':
      return { ...none, polygons: [c] };
    case 'MultiPolygon':
      return { ...none, polygons: c };
    default:
      return none;
  }
}

function lineSegments(line: readonly Position[]): Segment[] {
  const out: Segment[] = [];
  for (let i = 1; i < line.length; i++) out.push([line[i - 1], line[i]]);
  return out;
}

/** A ring's edges, closed from its last position back to its first (GeoJSON repeats the first; a ring need not). */
function ringSegments(ring: Ring): Segment[] {
  return ring.length > 1 ? [...lineSegments(ring), [ring[ring.length - 1], ring[0]]] : [];
}

function segments(g: Parts): Segment[] {
  return [...g.lines.flatMap(lineSegments), ...g.polygons.flat().flatMap(ringSegments)];
}

function vertices(g: Parts): Position[] {
  return [...g.points, ...g.lines.flat(), ...g.polygons.flat(2)];
}

const cross = (o: Position, a: Position, b: Position) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);

/** Sides of a line within rounding: a point computed on a segment (a midpoint) is on it, not beside it. */
function side(o: Position, a: Position, b: Position): number {
  const c = cross(o, a, b);
  const scale = Math.hypot(a[0] - o[0], a[1] - o[1]) * Math.hypot(b[0] - o[0], b[1] - o[1]);
  return Math.abs(c) <= 1e-12 * scale ? 0 : Math.sign(c);
}

function onSegment(p: Position, [a, b]: Segment): boolean {
  return (
    side(a, b, p) === 0 &&
    Math.min(a[0], b[0]) <= p[0] &&
    p[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= p[1] &&
    p[1] <= Math.max(a[1], b[1])
  );
}

function segmentsMeet(s: Segment, t: Segment): boolean {
  const [a, b] = s;
  const [c, d] = t;
  const d1 = side(c, d, a);
  const d2 = side(c, d, b);
  const d3 = side(a, b, c);
  const d4 = side(a, b, d);
  if (d1 * d2 < 0 && d3 * d4 < 0) return true;
  return onSegment(a, t) || onSegment(b, t) || onSegment(c, s) || onSegment(d, s);
}

/** Where along `s` (0 at its start, 1 at its end, both excluded) it meets `t`. */
function meetings(s: Segment, t: Segment): number[] {
  const [p, q] = s;
  const [r, u] = t;
  const dx = q[0] - p[0];
  const dy = q[1] - p[1];
  const length2 = dx * dx + dy * dy;
  if (length2 === 0 || !segmentsMeet(s, t)) return [];
  const along = (v: Position) => ((v[0] - p[0]) * dx + (v[1] - p[1]) * dy) / length2;
  const d1 = cross(r, u, p);
  const d2 = cross(r, u, q);
  // Collinear: they overlap between the ends of `t` as seen along `s`.
  const at = side(r, u, p) === 0 && side(r, u, q) === 0 ? [along(r), along(u)] : [d1 / (d1 - d2)];
  return at.filter((x) => x > 0 && x < 1);
}

/** 1 inside the polygon, 0 on its boundary, -1 outside it (in a hole is outside). */
function locate(p: Position, polygon: readonly Ring[]): number {
  let inside = false;
  for (const ring of polygon) {
    for (const edge of ringSegments(ring)) {
      if (onSegment(p, edge)) return 0;
      const [a, b] = edge;
      if (a[1] > p[1] !== b[1] > p[1] && p[0] < ((b[0] - a[0]) * (p[1] - a[1])) / (b[1] - a[1]) + a[0]) inside = !inside;
    }
  }
  return inside ? 1 : -1;
}

/** The geometry holds the position: one of its points, on one of its lines, in or on one of its polygons. */
function covers(g: Parts, p: Position): boolean {
  return (
    g.points.some((q) => q[0] === p[0] && q[1] === p[1]) ||
    g.lines.some((line) => lineSegments(line).some((s) => onSegment(p, s))) ||
    g.polygons.some((polygon) => locate(p, polygon) >= 0)
  );
}

/**
 * Two geometries meet where their edges meet, or else where one holds a vertex of the other (a part that
 * meets the other without any edge crossing lies wholly inside it).
 */
function intersects(a: Parts, b: Parts): boolean {
  const sb = segments(b);
  if (segments(a).some((s) => sb.some((t) => segmentsMeet(s, t)))) return true;
  return vertices(a).some((p) => covers(b, p)) || vertices(b).some((p) => covers(a, p));
}

function within(a: Parts, shape: Parts): boolean {
  if (a.polygons.length > 0 && shape.polygons.length === 0) return false;
  if (!vertices(a).every((p) => covers(shape, p))) return false;
  // An edge leaves the shape only where it meets the shape's edges: between two such points it is wholly in or
  // wholly out, as its middle is.
  const edges = segments(shape);
  for (const s of segments(a)) {
    const cuts = [0, 1, ...edges.flatMap((t) => meetings(s, t))].sort((x, y) => x - y);
    for (let i = 1; i < cuts.length; i++) {
      const t = (cuts[i - 1] + cuts[i]) / 2;
      const [p, q] = s;
      if (!covers(shape, [p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t])) return false;
    }
  }
  // A polygon whose boundary lies in the shape may still enclose one of the shape's holes.
  const holes = shape.polygons.flatMap((polygon) => polygon.slice(1));
  return !a.polygons.some((polygon) => holes.some((hole) => hole.some((v) => locate(v, polygon) === 1)));
}

export function geoRelation(geometry: Geometry, relation: GeoRelation, shape: Geometry): boolean {
  const g = parts(geometry);
  const s = parts(shape);
  if (relation === 'WITHIN') return within(g, s);
  return intersects(g, s) === (relation === 'INTERSECTS');
}
