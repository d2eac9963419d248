/**
 * The SQL that differs between SQLite and PostgreSQL, in one place. Everything else is written once, in the
 * subset both engines read the same way (standard SQL, `?` placeholders, row-value comparisons, CTEs,
 * `ON CONFLICT ... DO NOTHING`, integers for booleans).
 */
import { FALSE, Sql, sql } from './sql.js';
import type { Row, StoreKind } from './store.js';

/**
 * A full-text search: an item matches when any word of any part is in one of that part's columns. Words are
 * the runs of letters and digits of the text.
 */
export type TextSearch = ReadonlyArray<{ words: readonly string[]; columns: readonly string[] }>;

/** A table's full-text index: its SQLite FTS5 table (rowid = item id) and the text columns it covers. */
export interface TextIndex {
  /** The item table and its alias in the query. */
  table: string;
  alias: string;
  /** The FTS5 table (SQLite). */
  fts: string;
  columns: readonly string[];
}

/** The parts of a relevance-ordered query: FROM, its WHERE condition and ORDER BY (most relevant first). */
export interface RankedSearch {
  from: Sql;
  where: Sql;
  order: Sql;
}

export interface ColumnTypes {
  /** A service-generated id, the table's primary key. */
  id: string;
  /** A 64-bit integer (ids, timestamps, counts). */
  integer: string;
  /** A double. */
  real: string;
  text: string;
  blob: string;
  /** A JSON document whose fields a statement reads (`documentField`): SQLite's binary JSON, PostgreSQL's jsonb. */
  document: string;
}

export interface Dialect {
  readonly kind: StoreKind;
  readonly types: ColumnTypes;
  /** Trailing table option for tables keyed by their primary key alone (SQLite's WITHOUT ROWID). */
  readonly withoutRowid: string;
  /**
   * Whether a table's globally unique integer column can be its storage key: on SQLite an INTEGER PRIMARY KEY
   * is the rowid, so a row reached through any index, or joined on that column, is one integer seek away
   * (a WITHOUT ROWID table keyed by `(project_id, space, id)` seeks by the whole key: about twice the time
   * per row for a page that visits 20,000 rows). PostgreSQL keeps the composite key and an index on the id.
   */
  readonly integerRowKey: boolean;
  /**
   * What a `DROP TABLE` ends with so that the views reading the table go with it (PostgreSQL's `CASCADE`: the
   * Postgres gateway's views read Strata's tables); SQLite's views are not checked when a table is dropped.
   */
  readonly dropDependents: string;
  /** SQL of the JSON text of a text expression (a JSON string literal, escaped as JSON.stringify does). */
  jsonQuote(expr: string): string;
  /** SQL that is true when the JSON array text `expr` holds a value other than null at position `index`. */
  jsonArrayHasValue(expr: string, index: number): string;
  /** The larger / smaller of two values (scalar). */
  greatest(a: string, b: string): string;
  least(a: string, b: string): string;
  /**
   * An aggregate joining a text expression's values with `separator`, in `order`: as bytes on SQLite (a BLOB,
   * read without decoding), as text on PostgreSQL (a bytea would travel in hex, twice its size, and be
   * decoded by the client: about 3 of the 10 ms of Strata CPU a 1000-event page took).
   */
  joinBytes(expr: string, separator: string, order?: string): string;
  /** A planner hint after a table name that keeps it from using its indexes to pick rows (empty where unknown). */
  readonly notIndexed: string;
  /** Suffix of a SELECT that locks the rows read until the transaction ends (SQLite's writer holds them all). */
  readonly forUpdate: string;
  /** A planner hint after a table name that makes it use the named index (empty where unknown). */
  indexedBy(index: string): string;
  /** A subquery of the ids of the items matching `search` (all of a project's rows are candidates). */
  searchIds(index: TextIndex, search: TextSearch, projectId: number): Sql;
  /** The relevance of the item under the index's alias for `search`, in [0, 1): 0 when it does not match. */
  searchRank(index: TextIndex, search: TextSearch): Sql;
  /** A query over the matching items ordered by relevance (ties by id). */
  rankedSearch(index: TextIndex, search: TextSearch): RankedSearch;
  /** A subquery of these ids (column `id`), passed as one parameter, however many they are. */
  idList(ids: readonly number[]): Sql;
  /**
   * A statement that makes the transaction wait for, then hold until it ends, the lock named by these two
   * numbers, or undefined where write transactions run one at a time anyway (SQLite).
   */
  exclusive(space: number, key: number): Sql | undefined;
  /** Like `exclusive`, but held together with other shared holders: it waits only for an exclusive holder, and makes one wait. */
  shared(space: number, key: number): Sql | undefined;
  /** The column type of text that compares and sorts by code point, whatever the database's collation. */
  readonly binaryText: string;
  /** The statements adding these columns to a table: one per column where ALTER TABLE takes one (SQLite). */
  addColumns(table: string, columns: ReadonlyArray<{ name: string; type: string }>): string[];
  /**
   * A subquery of the elements (column `value`) of a JSON array held as text in `list`: texts, numbers, or
   * booleans as 1 and 0.
   */
  jsonElements(list: Sql, kind: 'text' | 'number' | 'boolean'): Sql;
  /** The number of elements of a JSON array held as text. */
  jsonLength(list: Sql): Sql;
  /**
   * Whether a JSON array of objects held as text has an element holding every member of `fields` with the
   * same value (members the element has beyond them do not matter).
   */
  jsonListHasObject(list: Sql, fields: Readonly<Record<string, string | number | boolean>>): Sql;
  /** The part of a text before the first `separator` in it, and the part after it (the text holds one). */
  textBefore(text: Sql, separator: string): Sql;
  textAfter(text: Sql, separator: string): Sql;
  /** The length of a text in bytes of UTF-8. */
  byteLength(text: Sql): Sql;
  /** Element `i` (from 0) of a JSON array held as text, as `jsonElements` gives elements; NULL past the end. */
  jsonElementAt(list: Sql, i: number, kind: 'text' | 'number' | 'boolean'): Sql;
  /**
   * A subquery of the text elements of a JSON array held as text, with their positions: columns `i` (from 0)
   * and `value` (comparing by code point, as `binaryText`).
   */
  jsonElementsNumbered(list: Sql): Sql;
  /**
   * The text, in the form `JSON.stringify` writes it, of the JSON array of the `value` texts of `rows` (a
   * subquery with columns `i` and `value`, giving at least one row) in the order of `i`; it compares by code point.
   */
  jsonTextArray(rows: Sql): Sql;
  /**
   * The planner's statistics of a table: the rows they count (`rows`, -1 before the table was first
   * analyzed) and the rows changed since (`changed`), or NULL where the engine does not count changes
   * (SQLite: its statistics are only what ANALYZE last wrote to `sqlite_stat1`).
   */
  tableStatistics(table: string): Sql;
  /**
   * The statements that take a table's statistics for every connection's planner. SQLite's other
   * connections (the read workers) load statistics with the schema and keep them until the schema changes,
   * which ANALYZE does not count as a change: a table created and dropped again makes them reload.
   */
  analyze(table: string): string[];
  /** An inner join whose left table the planner must read first (SQLite's CROSS JOIN; a plain JOIN elsewhere). */
  readonly orderedJoin: string;
  /**
   * What planning a statement costs: SQLite plans in microseconds whatever the statement's size; PostgreSQL
   * in proportion to it (a UNION ALL of 100 one-row subqueries: 41 ms). Where a read can be written as many
   * small subqueries or as one join, `high` takes the join.
   */
  readonly planning: 'low' | 'high';
  /** Whether a statement failed on a unique index. */
  isUniqueViolation(error: unknown): boolean;
  /** The statement that asks the planner how it would run `query`, with the same parameters. */
  explain(query: Sql): Sql;
  /** The plan, as JSON, from the rows of `explain`. */
  planOf(rows: readonly Row[]): unknown;
  /** A document column's value from the JSON text `json` (a parameter). */
  document(json: Sql): Sql;
  /** A document as JSON text. */
  documentText(doc: Sql): Sql;
  /**
   * The value at `keys` in a document, NULL where there is none: a text that compares by code point, or a
   * number. `keys` are identifiers the caller has checked (letters, digits, `_`, `-`).
   */
  documentField(doc: Sql, keys: readonly string[], kind: 'text' | 'number'): Sql;
  /** Whether a document holds a value (a member) at `keys`. */
  documentHas(doc: Sql, keys: readonly string[]): Sql;
  /** The start, in epoch milliseconds, of the UTC calendar month, quarter or year of a time in epoch milliseconds. */
  calendarStart(ms: Sql, unit: 'month' | 'quarter' | 'year'): Sql;
}

/** A text as an SQL string literal. */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;
const sqlitePath = (keys: readonly string[]): string => literal(`$${keys.map((k) => `."${k}"`).join('')}`);
const pgPath = (keys: readonly string[]): string => keys.map(literal).join(' -> ');

const errorCode = (error: unknown): string | undefined => {
  const e = error as { code?: string; cause?: { code?: string } };
  return e?.code ?? e?.cause?.code;
};

/** FTS5 query text: any of the words, each part in its columns. */
function fts5Query(index: TextIndex, search: TextSearch): string {
  return search
    .map(({ words, columns }) => {
      const terms = words.length ? words.map((w) => `"${w}"`).join(' OR ') : '""';
      const all = columns.length === index.columns.length && columns.every((c) => index.columns.includes(c));
      return `(${all ? '' : `{${columns.join(' ')}} : `}(${terms}))`;
    })
    .join(' OR ');
}

/**
 * The punctuation PostgreSQL's parser reads inside a token (file names, hosts, e-mail addresses, URLs,
 * versions, signed numbers) or as the edge of a tag or entity it drops; every other mark already separates
 * words. Only these are translated, since translate's cost grows with its set: over 14,000 matches of a
 * million rows, every ASCII mark doubled a ranked search's time, and these twelve add about a third.
 */
const GLUE = '&+-./:<>@\\_~';

/**
 * The tsvector of a text expression for full-text search on PostgreSQL. The glue punctuation is read as
 * space first: the parser would otherwise keep `notes.txt`, `a/b`, `x@y.z` or `1.2.3` whole and drop
 * `<tag>`s, while a search's words are runs of letters and digits (searchWords), as SQLite's tokenizer reads
 * a text.
 */
export function tsDocument(text: string): string {
  return `to_tsvector('simple', translate(${text}, ${literal(GLUE)}, ${literal(' '.repeat(GLUE.length))}))`;
}

/** The tsvector of one column, exactly as its GIN index is declared (schema.ts), so the index serves it. */
const tsvector = (alias: string, column: string) => tsDocument(`coalesce(${alias}.${column}, '')`);
/** A tsquery matching any of the words (runs of letters and digits need no quoting). */
const tsquery = (words: readonly string[]) => sql`to_tsquery('simple', ${words.join(' | ')})`;

function tsMatch(index: TextIndex, search: TextSearch): Sql {
  const parts = search.flatMap(({ words, columns }) => (words.length ? columns.map((c) => sql`${Sql.raw(tsvector(index.alias, c))} @@ ${tsquery(words)}`) : []));
  return parts.length ? Sql.or(parts).wrap() : FALSE;
}

function tsRank(index: TextIndex, search: TextSearch): Sql {
  const words = [...new Set(search.flatMap((p) => p.words))];
  if (words.length === 0) return Sql.raw('0.0');
  const document = index.columns.map((c) => `coalesce(${index.alias}.${c}, '')`).join(` || ' ' || `);
  return sql`(SELECT r / (1.0 + r) FROM (SELECT ts_rank(${Sql.raw(tsDocument(document))}, ${tsquery(words)}) AS r) rank)`;
}

interface SqlitePlanStep {
  detail: string;
  steps?: SqlitePlanStep[];
}

/** SQLite's plan rows (`id`, `parent`, `detail`) as the tree they describe. */
function sqlitePlan(rows: readonly Row[]): SqlitePlanStep[] {
  const top: SqlitePlanStep[] = [];
  const byId = new Map<number, SqlitePlanStep>();
  for (const row of rows) {
    const step: SqlitePlanStep = { detail: String(row.detail) };
    byId.set(Number(row.id), step);
    const parent = byId.get(Number(row.parent));
    if (parent) (parent.steps ??= []).push(step);
    else top.push(step);
  }
  return top;
}

export const sqliteDialect: Dialect = {
  kind: 'sqlite',
  types: { id: 'INTEGER PRIMARY KEY AUTOINCREMENT', integer: 'INTEGER', real: 'REAL', text: 'TEXT', blob: 'BLOB', document: 'BLOB' },
  withoutRowid: ' WITHOUT ROWID',
  integerRowKey: true,
  dropDependents: '',
  tableStatistics: (table) =>
    sql`SELECT coalesce((SELECT CAST(stat AS INTEGER) FROM sqlite_stat1 WHERE tbl = ${table} LIMIT 1), -1) AS rows, NULL AS changed`,
  analyze: (table) => [`ANALYZE ${table}`, 'CREATE TABLE strata_replan (x)', 'DROP TABLE strata_replan'],
  jsonQuote: (e) => `json_quote(${e})`,
  jsonArrayHasValue: (e, i) => `coalesce(json_type(${e}, '$[${Math.trunc(i)}]'), 'null') <> 'null'`,
  greatest: (a, b) => `max(${a}, ${b})`,
  least: (a, b) => `min(${a}, ${b})`,
  // group_concat appends in the order rows reach it, which the caller's subquery fixes.
  joinBytes: (e, s) => `CAST(group_concat(${e}, '${s}') AS BLOB)`,
  notIndexed: ' NOT INDEXED',
  forUpdate: '',
  indexedBy: (index) => ` INDEXED BY ${index}`,
  searchIds: (index, search) => sql`SELECT rowid FROM ${Sql.raw(index.fts)} WHERE ${Sql.raw(index.fts)} MATCH ${fts5Query(index, search)}`,
  searchRank: (index, search) => {
    const fts = Sql.raw(index.fts);
    return sql`coalesce((SELECT r / (1.0 + r) FROM (SELECT max(0.0, -bm25(${fts})) AS r FROM ${fts} WHERE ${fts} MATCH ${fts5Query(index, search)} AND rowid = ${Sql.raw(
      `${index.alias}.id`,
    )})), 0)`;
  },
  idList: (ids) => sql`SELECT value AS id FROM json_each(${JSON.stringify(ids)})`,
  exclusive: () => undefined,
  shared: () => undefined,
  rankedSearch: (index, search) => ({
    from: Sql.raw(`${index.fts} JOIN ${index.table} ${index.alias} ON ${index.alias}.id = ${index.fts}.rowid`),
    where: sql`${Sql.raw(index.fts)} MATCH ${fts5Query(index, search)}`,
    order: Sql.raw(`bm25(${index.fts}), ${index.alias}.id`),
  }),
  binaryText: 'TEXT',
  addColumns: (table, columns) => columns.map((c) => `ALTER TABLE ${table} ADD COLUMN ${c.name} ${c.type}`),
  orderedJoin: 'CROSS JOIN',
  planning: 'low',
  jsonElements: (list) => sql`SELECT value FROM json_each(${list})`,
  jsonLength: (list) => sql`json_array_length(${list})`,
  jsonListHasObject: (list, fields) => {
    const wanted = JSON.stringify(fields);
    const same = Object.keys(fields).map((k) => {
      const path = Sql.raw(sqlitePath([k]));
      return sql`json_extract(e.value, ${path}) IS json_extract(${wanted}, ${path}) AND json_type(e.value, ${path}) IS json_type(${wanted}, ${path})`;
    });
    return sql`EXISTS (SELECT 1 FROM json_each(${list}) e WHERE json_type(e.value) = 'object'${Sql.join(same.map((c) => sql` AND ${c}`), '')})`;
  },
  textBefore: (text, separator) => sql`substr(${text}, 1, instr(${text}, ${separator}) - 1)`,
  textAfter: (text, separator) => sql`substr(${text}, instr(${text}, ${separator}) + 1)`,
  byteLength: (text) => sql`length(CAST(${text} AS BLOB))`,
  jsonElementAt: (list, i) => sql`json_extract(${list}, ${`$[${i}]`})`,
  jsonElementsNumbered: (list) => sql`SELECT key AS i, value FROM json_each(${list})`,
  jsonTextArray: (rows) => sql`(SELECT json_group_array(r.value ORDER BY r.i) FROM (${rows}) r)`,
  isUniqueViolation: (error) => /^SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)$/.test(errorCode(error) ?? ''),
  explain: (query) => new Sql(`EXPLAIN QUERY PLAN ${query.text}`, query.params),
  planOf: sqlitePlan,
  document: (json) => sql`jsonb(${json})`,
  documentText: (doc) => sql`json(${doc})`,
  documentField: (doc, keys) => sql`json_extract(${doc}, ${Sql.raw(sqlitePath(keys))})`,
  documentHas: (doc, keys) => sql`json_type(${doc}, ${Sql.raw(sqlitePath(keys))}) IS NOT NULL`,
  calendarStart: (ms, unit) => {
    const seconds = sql`(${ms}) / 1000.0`;
    if (unit === 'year') return sql`(unixepoch(strftime('%Y-01-01', ${seconds}, 'unixepoch')) * 1000)`;
    if (unit === 'month') return sql`(unixepoch(strftime('%Y-%m-01', ${seconds}, 'unixepoch')) * 1000)`;
    return sql`(unixepoch(printf('%s-%02d-01', strftime('%Y', ${seconds}, 'unixepoch'), ((CAST(strftime('%m', ${seconds}, 'unixepoch') AS INTEGER) - 1) / 3) * 3 + 1)) * 1000)`;
  },
};

/** A PostgreSQL advisory transaction lock taken by `fn`, keyed by two 32-bit numbers, or one 64-bit number for larger keys. */
function advisoryLock(fn: string): (space: number, key: number) => Sql {
  const call = Sql.raw(fn);
  return (space, key) =>
    key <= 0x7fffffff ? sql`SELECT ${call}(${space}::int, ${key}::int)` : sql`SELECT ${call}((${space}::bigint << 53) + ${key}::bigint)`;
}

export const postgresDialect: Dialect = {
  kind: 'postgres',
  types: { id: 'BIGINT PRIMARY KEY', integer: 'BIGINT', real: 'DOUBLE PRECISION', text: 'TEXT', blob: 'BYTEA', document: 'JSONB' },
  withoutRowid: '',
  integerRowKey: false,
  dropDependents: ' CASCADE',
  jsonQuote: (e) => `to_json(${e})::text`,
  jsonArrayHasValue: (e, i) => `coalesce(jsonb_typeof(${e}::jsonb -> ${Math.trunc(i)}), 'null') <> 'null'`,
  greatest: (a, b) => `greatest(${a}, ${b})`,
  least: (a, b) => `least(${a}, ${b})`,
  joinBytes: (e, s, order) => `string_agg(${e}, '${s}'${order ? ` ORDER BY ${order}` : ''})`,
  notIndexed: '',
  forUpdate: ' FOR UPDATE',
  indexedBy: () => '',
  searchIds: (index, search, projectId) =>
    sql`SELECT ${Sql.raw(index.alias)}.id FROM ${Sql.raw(`${index.table} ${index.alias}`)} WHERE ${Sql.raw(index.alias)}.project_id = ${projectId} AND ${tsMatch(index, search)}`,
  searchRank: (index, search) => sql`(CASE WHEN ${tsMatch(index, search)} THEN ${tsRank(index, search)} ELSE 0 END)`,
  idList: (ids) => sql`SELECT unnest(${`{${ids.join(',')}}`}::bigint[]) AS id`,
  // Keys that fit 32 bits (0, and project ids of databases written before ids were large) keep the
  // two-number form that processes of earlier builds take too; larger ones (ids below 2^53) take the one-number
  // form, whose keys never meet the other's, as space * 2^53 + key.
  exclusive: advisoryLock('pg_advisory_xact_lock'),
  shared: advisoryLock('pg_advisory_xact_lock_shared'),
  rankedSearch: (index, search) => ({
    from: Sql.raw(`${index.table} ${index.alias}`),
    where: tsMatch(index, search),
    // A search without words (only punctuation, `%`) matches nothing, and its rank would be a constant, which
    // PostgreSQL refuses as a sort key.
    order: search.some((p) => p.words.length > 0) ? sql`${tsRank(index, search)} DESC, ${Sql.raw(index.alias)}.id` : Sql.raw(`${index.alias}.id`),
  }),
  binaryText: 'TEXT COLLATE "C"',
  addColumns: (table, columns) => (columns.length ? [`ALTER TABLE ${table} ${columns.map((c) => `ADD COLUMN ${c.name} ${c.type}`).join(', ')}`] : []),
  orderedJoin: 'JOIN',
  planning: 'high',
  analyze: (table) => [`ANALYZE ${table}`],
  tableStatistics: (table) =>
    sql`SELECT c.reltuples AS rows, coalesce(s.n_mod_since_analyze, 0) AS changed FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = to_regclass(${table})`,
  jsonElements: (list, kind) =>
    kind === 'text'
      ? sql`SELECT value FROM jsonb_array_elements_text((${list})::jsonb) AS e(value)`
      : kind === 'number'
        ? sql`SELECT value::double precision AS value FROM jsonb_array_elements_text((${list})::jsonb) AS e(value)`
        : sql`SELECT value::boolean::int AS value FROM jsonb_array_elements_text((${list})::jsonb) AS e(value)`,
  jsonLength: (list) => sql`jsonb_array_length((${list})::jsonb)`,
  jsonListHasObject: (list, fields) => sql`(${list})::jsonb @> (${JSON.stringify([fields])})::jsonb`,
  textBefore: (text, separator) => sql`split_part(${text}, ${separator}, 1)`,
  textAfter: (text, separator) => sql`substr(${text}, strpos(${text}, ${separator}) + 1)`,
  byteLength: (text) => sql`octet_length(${text})`,
  jsonElementAt: (list, i, kind) => {
    const text = sql`((${list})::jsonb ->> ${Sql.raw(String(Math.trunc(i)))})`;
    return kind === 'text' ? text : kind === 'number' ? sql`${text}::double precision` : sql`${text}::boolean::int`;
  },
  jsonElementsNumbered: (list) => sql`SELECT o - 1 AS i, value COLLATE "C" AS value FROM jsonb_array_elements_text((${list})::jsonb) WITH ORDINALITY AS e(value, o)`,
  // to_json quotes a text as JSON.stringify does (the same escapes, other characters as they are).
  jsonTextArray: (rows) => sql`(SELECT ('[' || string_agg(to_json(r.value)::text, ',' ORDER BY r.i) || ']') COLLATE "C" FROM (${rows}) r)`,
  isUniqueViolation: (error) => errorCode(error) === '23505',
  explain: (query) => new Sql(`EXPLAIN (FORMAT JSON) ${query.text}`, query.params),
  // One row, one column, holding a list of one plan.
  planOf: (rows) => (Object.values(rows[0] ?? {})[0] as unknown[] | undefined)?.[0] ?? null,
  document: (json) => sql`(${json})::jsonb`,
  documentText: (doc) => sql`(${doc})::text`,
  documentField: (doc, keys, kind) => {
    const path = [...keys.slice(0, -1).map((k) => ` -> ${literal(k)}`), ` ->> ${literal(keys[keys.length - 1])}`].join('');
    const value = sql`(${doc}${Sql.raw(path)})`;
    return kind === 'text' ? sql`${value} COLLATE "C"` : sql`${value}::double precision`;
  },
  documentHas: (doc, keys) => sql`(${doc} -> ${Sql.raw(pgPath(keys))}) IS NOT NULL`,
  calendarStart: (ms, unit) => sql`(extract(epoch FROM date_trunc(${Sql.raw(`'${unit}'`)}, to_timestamp((${ms}) / 1000.0) AT TIME ZONE 'UTC')) * 1000)::bigint`,
};
