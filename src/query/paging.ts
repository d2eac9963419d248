/**
 * Keyset pagination over any sort, shared by every list operation.
 *
 * Sorting on a nullable key with "nulls first/last" cannot use a plain index when written as one ORDER BY,
 * so the result is cut into segments: the items whose first sort key is null and those where it is not, in
 * the order the sort asks for. Inside a segment the order is over plain values plus the id, which indexes
 * serve, and the keyset condition is a row-value comparison. A cursor names a segment and the last key
 * values in it, so every page costs the same whatever its depth.
 *
 * A page is read in two steps within one statement: an inner query picks the ids and sort keys of the page
 * (it needs only what the filter and the sort read, so an index can often answer it alone, and a sort that
 * no index serves carries ids rather than whole items), then the page's rows are joined back by id and
 * `select` is computed for them alone. The outer query keeps the inner order without sorting again.
 */
import { badRequest } from '../http/errors.js';
import type { Reader, ReadOptions } from '../storage/read-pool.js';
import type { Dialect } from '../storage/dialect.js';
import { Sql, sql, type SqlValue } from '../storage/sql.js';

export interface SortKey {
  expr: Sql;
  nullable: boolean;
  desc: boolean;
  nullsFirst: boolean;
  /** An index on (project, this key) exists, so whether any item of the project lacks the key is one index probe. */
  indexed?: boolean;
  /** A value of the key's type that stands in for a missing one where a comparison needs a value (`0`, `''`). */
  blank?: Sql;
}

export interface PageQuery {
  select: Sql;
  from: Sql;
  /**
   * The FROM of the step that picks a page's ids (with its joins), when it differs from `from` and `joins`:
   * a planner hint, or another table leading the join so that its index serves the sort.
   */
  pick?: Sql;
  /**
   * Tables joined to `from` (`LEFT JOIN t ON ...`), which the filter, the keys and `select` may read. With
   * joins the page is read in one step, `select` beside the keys: joining several tables back by id for the
   * page's rows costs more than it saves (PostgreSQL also planned that join back as a scan of the table).
   */
  joins?: Sql;
  where: Sql;
  /**
   * A condition every listed row meets (the project). When the first key is indexed within it, the segment
   * of rows whose first key is null is skipped if no row in this scope has a null there: one index probe,
   * and the common case, which spares running the filter on an empty segment.
   */
  scope: Sql;
  /** User sort keys; the id is appended as the final tie-breaker. */
  keys: readonly SortKey[];
  idExpr: string;
  limit: number;
  /** Position to continue from, as returned in `next` by an earlier page. */
  after?: unknown;
  /**
   * A text column of `select` whose values the page gives joined by SQLite, as `Page.joined`, instead of
   * rows: JSON items rendered by SQL become the inside of a JSON array without passing through JavaScript.
   */
  join?: string;
  /** The client reads other parts of the result in parallel (see ReadOptions). */
  parallel?: boolean;
  /** The engine's SQL for joining the page's text. */
  dialect: Dialect;
}

export interface Page<Row> {
  rows: Row[];
  /** With `join`: the page's values of that column, comma-separated UTF-8, in pieces to be joined by commas (one per segment read). */
  joined: Buffer[];
  next?: PagePosition;
}

export interface PagePosition {
  s: number;
  v: SqlValue[];
}

/**
 * Pages of up to this many rows (every list's maximum) are read where the reader chooses; a larger page (a
 * query's result set of up to 10,000) is a statement long enough to read on a worker (ReadOptions.scan).
 */
const IN_PROCESS_ROWS = 1000;

const readOptions = (q: PageQuery): ReadOptions => ({ parallel: q.parallel, scan: q.limit > IN_PROCESS_ROWS });

interface Segment {
  keys: Array<{ expr: Sql; desc: boolean }>;
  conditions: Sql[];
  /** The segment of null first keys, when an index tells cheaply whether it is empty (see PageQuery.scope). */
  probe?: boolean;
}

/**
 * The first sort key, when nullable, splits the result into a null and a non-null segment. Later nullable
 * keys sit under the values of earlier ones, so they cannot split the result; they sort by a null flag and
 * then by the value (coalesced so that row-value comparisons never meet NULL).
 */
function segments(keys: readonly SortKey[], idExpr: string): Segment[] {
  const [first, ...rest] = keys;
  const tail = rest.flatMap((k) =>
    k.nullable
      ? [
          { expr: sql`(CASE WHEN ${k.expr} IS NULL THEN 1 ELSE 0 END)`, desc: k.nullsFirst },
          { expr: sql`coalesce(${k.expr}, ${k.blank ?? Sql.raw('0')})`, desc: k.desc },
        ]
      : [{ expr: k.expr, desc: k.desc }],
  );
  const id = { expr: Sql.raw(idExpr), desc: keys.length > 0 ? keys[keys.length - 1].desc : false };
  if (!first) return [{ keys: [id], conditions: [] }];
  const ordered = [{ expr: first.expr, desc: first.desc }, ...tail, id];
  if (!first.nullable) return [{ keys: ordered, conditions: [] }];
  const present: Segment = { keys: ordered, conditions: [sql`${first.expr} IS NOT NULL`] };
  const missing: Segment = { keys: [...tail, id], conditions: [sql`${first.expr} IS NULL`], probe: first.indexed === true };
  return first.nullsFirst ? [missing, present] : [present, missing];
}

function keysetCondition(keys: Segment['keys'], values: readonly SqlValue[]): Sql {
  const uniform = keys.every((k) => k.desc === keys[0].desc);
  if (uniform) {
    const op = keys[0].desc ? '<' : '>';
    return sql`(${Sql.join(
      keys.map((k) => k.expr),
      ', ',
    )}) ${Sql.raw(op)} (${values})`;
  }
  const alternatives = keys.map((k, i) => {
    const equal = keys.slice(0, i).map((p, j) => sql`${p.expr} = ${values[j]}`);
    return Sql.and([...equal, sql`${k.expr} ${Sql.raw(k.desc ? '<' : '>')} ${values[i]}`]);
  });
  return Sql.or(alternatives).wrap();
}

function isPosition(v: unknown, segmentCount: number): v is PagePosition {
  if (!v || typeof v !== 'object') return false;
  const p = v as PagePosition;
  return (
    Number.isInteger(p.s) &&
    p.s >= 0 &&
    p.s < segmentCount &&
    Array.isArray(p.v) &&
    p.v.every((x) => x === null || typeof x === 'string' || typeof x === 'number')
  );
}

export async function fetchPage<Row extends Record<string, unknown>>(reader: Reader, q: PageQuery): Promise<Page<Row>> {
  const segs = segments(q.keys, q.idExpr);
  let start = 0;
  let position: PagePosition | undefined;
  if (q.after !== undefined) {
    if (!isPosition(q.after, segs.length) || q.after.v.length !== segs[q.after.s].keys.length) {
      throw badRequest('cursor: not a cursor issued by this server');
    }
    position = q.after;
    start = position.s;
  }

  // Rows keep their extra `__k<i>` key columns; callers map rows to API objects and ignore them.
  const rows: Row[] = [];
  const joined: Buffer[] = [];
  /** Rows read so far over all segments (with `join` they are counted, not kept), at most `limit + 1`. */
  let read = 0;
  /** The segment and sort keys of the last row read that is within the limit: where a next page starts. */
  let last: PagePosition | undefined;
  const joins = q.joins ? sql` ${q.joins}` : Sql.raw('');
  // The page's rows are joined back by id within the scope: on PostgreSQL every key starts with the project, so
  // a join on the id alone cannot seek and reads the whole table; the ordered join keeps SQLite from
  // leading with the table (its group_concat appends in the order rows are read).
  const joinBack = Sql.raw(q.dialect.orderedJoin);
  for (let s = start; s < segs.length && read <= q.limit; s++) {
    const seg = segs[s];
    if (seg.probe) {
      const [probe] = await reader.all<{ found: number }>(sql`SELECT EXISTS (SELECT 1 FROM ${q.from}${joins} WHERE ${Sql.and([q.scope, ...seg.conditions])}) AS found`, readOptions(q));
      if (!probe.found) continue;
    }
    const conditions = [q.where, ...seg.conditions];
    if (position && s === position.s) conditions.push(keysetCondition(seg.keys, position.v));
    const keyColumns = seg.keys.map((k, i) => sql`${k.expr} AS __k${Sql.raw(String(i))}`);
    const order = seg.keys.map((k) => sql`${k.expr} ${Sql.raw(k.desc ? 'DESC' : 'ASC')}`);
    const wanted = q.limit - read;
    const picked = q.joins ? q.select : sql`${Sql.raw(q.idExpr)} AS __id`;
    const inner = sql`SELECT ${picked}, ${Sql.join(keyColumns, ', ')} FROM ${q.pick ?? sql`${q.from}${joins}`} WHERE ${Sql.and(conditions)} ORDER BY ${Sql.join(
      order,
      ', ',
    )} LIMIT ${wanted + 1}`;
    if (q.joins) {
      for (const row of await reader.all<Row>(inner, readOptions(q))) {
        if (read++ < q.limit) last = { s, v: seg.keys.map((_, i) => row[`__k${i}`] as SqlValue) };
        rows.push(row);
      }
      continue;
    }
    if (q.join === undefined) {
      const pageKeys = seg.keys.map((_, i) => Sql.raw(`p.__k${i}`));
      const pageOrder = Sql.join(
        seg.keys.map((k, i) => sql`p.__k${Sql.raw(String(i))} ${Sql.raw(k.desc ? 'DESC' : 'ASC')}`),
        ', ',
      );
      const rowsQuery = sql`SELECT ${q.select}, ${Sql.join(pageKeys, ', ')} FROM (${inner}) p ${joinBack} ${q.from} ON ${Sql.raw(q.idExpr)} = p.__id AND ${q.scope} ORDER BY ${pageOrder}`;
      const found = await reader.all<Row>(rowsQuery, readOptions(q));
      for (const row of found) {
        if (read++ < q.limit) last = { s, v: seg.keys.map((_, i) => row[`__k${i}`] as SqlValue) };
        rows.push(row);
      }
      continue;
    }
    // The page's text in one value, joined by SQLite: read as 1000 strings, then joined and encoded, a page
    // made a megabyte or two of short-lived garbage, and on a read worker 1001 rows to copy to the main
    // thread (an export ran 15-20% faster without). The page's ids and keys are materialized once (small
    // rows, kept in the order the inner query yields them); the text joins the first `wanted` of them, the
    // count says whether there is more, and the `wanted`-th row's keys are where the next page starts.
    // Numbering the rows with a window function instead cost about 1 ms per 1000 rows, and carrying the item
    // text through the window's buffer another 2 ms. group_concat appends in the order the materialized rows
    // are read; the property tests compare every page's order with an evaluator's, so a change there would
    // not go unseen.
    const pOrder = Sql.join(
      seg.keys.map((k, i) => Sql.raw(`__k${i} ${k.desc ? 'DESC' : 'ASC'}`)),
      ', ',
    );
    const qOrder = seg.keys.map((k, i) => `q.__k${i} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
    const pKeys = seg.keys.map((_, i) => `__k${i}`).join(', ');
    const lastKeys = seg.keys.map((_, i) => sql`(SELECT __k${Sql.raw(String(i))} FROM p ORDER BY ${pOrder} LIMIT 1 OFFSET ${Math.max(wanted - 1, 0)}) AS __k${Sql.raw(String(i))}`);
    const [page] = await reader.all<Record<string, unknown>>(
      sql`WITH p AS MATERIALIZED (${inner}) SELECT (SELECT ${Sql.raw(q.dialect.joinBytes(q.join, ',', qOrder))} FROM (SELECT ${q.select}, ${Sql.raw(
        seg.keys.map((_, i) => `q.__k${i}`).join(', '),
      )} FROM (SELECT __id, ${Sql.raw(pKeys)} FROM p ORDER BY ${pOrder} LIMIT ${wanted}) q ${joinBack} ${q.from} ON ${Sql.raw(q.idExpr)} = q.__id AND ${q.scope}) q) AS __joined, (SELECT count(*) FROM p) AS __count, ${Sql.join(lastKeys, ', ')}`,
      readOptions(q),
    );
    const count = page.__count as number;
    if (page.__joined) joined.push(typeof page.__joined === 'string' ? Buffer.from(page.__joined) : (page.__joined as Buffer));
    if (count >= wanted && wanted > 0) last = { s, v: seg.keys.map((_, i) => page[`__k${i}`] as SqlValue) };
    read += count;
  }

  if (rows.length > q.limit) rows.length = q.limit;
  return { rows, joined, next: read > q.limit ? last : undefined };
}
