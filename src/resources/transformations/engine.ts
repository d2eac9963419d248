/**
 * The SQL engine of transformations: DuckDB, embedded, one in-memory database per run. A query is parsed
 * first (`json_serialize_sql`, which also refuses anything but SELECT statements and gives the position of a
 * syntax error); the `_cdf.<table>` tables it names and the views its `cdf_nodes(...)` calls name, and only
 * those, are filled from the API by the caller's `load` (which reads with the transformation's source
 * credentials), then the query runs. The database can
 * neither read files nor reach the network: external access is off, extensions are neither installed nor
 * loaded, and the configuration is locked before any user SQL runs.
 */
import {
  DuckDBDecimalValue,
  DuckDBInstance,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBConnection,
} from '@duckdb/node-api';
import { ApiError, badRequest } from '../../http/errors.js';

// In this order: the directories are set while they still may be (pointing nowhere, so that no file of the
// host is reachable through them), then external access is turned off, and the configuration locked last.
const SETTINGS = {
  extension_directory: '/nonexistent/extensions',
  temp_directory: '/nonexistent/tmp',
  secret_directory: '/nonexistent/secrets',
  enable_external_access: 'false',
  autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false',
  allow_community_extensions: 'false',
  threads: '1',
  memory_limit: '512MB',
  lock_configuration: 'true',
};

export type ColumnType = 'BIGINT' | 'VARCHAR' | 'BOOLEAN' | 'DOUBLE' | 'TIMESTAMP' | 'MAP' | 'BIGINT[]' | 'VARCHAR[]' | 'JSON' | 'REFERENCE';
export type Column = readonly [string, ColumnType];

export interface SourceTable {
  /** The operation listing its items, paged by cursor (`/events/list`). */
  path: string;
  columns: readonly Column[];
}

const CREATED = [
  ['createdTime', 'TIMESTAMP'],
  ['lastUpdatedTime', 'TIMESTAMP'],
] as const;

/** The tables a query may read, as `_cdf.<name>`, with their columns (times as timestamps, metadata as maps). */
export const SOURCE_TABLES: Readonly<Record<string, SourceTable>> = {
  events: {
    path: '/events/list',
    columns: [
      ['id', 'BIGINT'],
      ['externalId', 'VARCHAR'],
      ['startTime', 'TIMESTAMP'],
      ['endTime', 'TIMESTAMP'],
      ['type', 'VARCHAR'],
      ['subtype', 'VARCHAR'],
      ['description', 'VARCHAR'],
      ['metadata', 'MAP'],
      ['assetIds', 'BIGINT[]'],
      ['source', 'VARCHAR'],
      ['dataSetId', 'BIGINT'],
      ...CREATED,
    ],
  },
  assets: {
    path: '/assets/list',
    columns: [
      ['id', 'BIGINT'],
      ['externalId', 'VARCHAR'],
      ['name', 'VARCHAR'],
      ['parentId', 'BIGINT'],
      ['parentExternalId', 'VARCHAR'],
      ['rootId', 'BIGINT'],
      ['description', 'VARCHAR'],
      ['metadata', 'MAP'],
      ['source', 'VARCHAR'],
      ['dataSetId', 'BIGINT'],
      ...CREATED,
    ],
  },
  timeseries: {
    path: '/timeseries/list',
    columns: [
      ['id', 'BIGINT'],
      ['externalId', 'VARCHAR'],
      ['name', 'VARCHAR'],
      ['isString', 'BOOLEAN'],
      ['isStep', 'BOOLEAN'],
      ['metadata', 'MAP'],
      ['unit', 'VARCHAR'],
      ['assetId', 'BIGINT'],
      ['description', 'VARCHAR'],
      ['dataSetId', 'BIGINT'],
      ...CREATED,
    ],
  },
};

/**
 * Tables Strata fills for its own functions, which a query cannot name, with the functions defined over them
 * once they are there: the data sets `dataset_id` looks in.
 */
const FUNCTION_TABLES: Readonly<Record<string, SourceTable & { functions: readonly string[] }>> = {
  datasets: {
    path: '/datasets/list',
    columns: [
      ['id', 'BIGINT'],
      ['externalId', 'VARCHAR'],
    ],
    functions: [`CREATE MACRO dataset_id(x) AS coalesce((SELECT id FROM _cdf.datasets WHERE "externalId" = x), error('dataset_id: there is no data set ' || x))`],
  },
};

/** A table of `_cdf` a query may name (own properties only: `_cdf.constructor` is no table). */
export const isSourceTable = (name: string): boolean => Object.hasOwn(SOURCE_TABLES, name);

/** A table a query reads, by its name. */
export const sourceTable = (name: string): SourceTable => (isSourceTable(name) ? SOURCE_TABLES[name] : FUNCTION_TABLES[name]);

/** The DuckDB expression reading a column from a row given as JSON (`j`). */
function columnExpr([name, type]: Column): string {
  const key = name.replace(/'/g, "''");
  const at = `j->'${key}'`;
  const text = `j->>'${key}'`;
  const expr =
    type === 'TIMESTAMP'
      ? `epoch_ms(CAST(${text} AS BIGINT))`
      : type === 'MAP'
        ? `CAST(json_transform(${at}, '"MAP(VARCHAR, VARCHAR)"') AS MAP(VARCHAR, VARCHAR))`
        : type === 'BIGINT[]'
          ? `CAST(json_transform(${at}, '["BIGINT"]') AS BIGINT[])`
          : type === 'VARCHAR[]'
            ? `CAST(json_transform(${at}, '["VARCHAR"]') AS VARCHAR[])`
            : type === 'JSON'
              ? at
              : type === 'REFERENCE'
                ? `json_transform(${at}, '{"space": "VARCHAR", "externalId": "VARCHAR"}')`
                : `CAST(${text} AS ${type})`;
  return `${expr} AS ${quoted(name)}`;
}

/** Functions of the Spark SQL dialect that transformations commonly use, defined over DuckDB's. */
const MACROS = [
  `CREATE MACRO node_reference(space, externalId) AS {'space': space, 'externalId': externalId}`,
  `CREATE MACRO to_unix_timestamp(t) AS epoch(t)::BIGINT`,
  `CREATE MACRO from_unixtime(s) AS strftime(to_timestamp(s), '%Y-%m-%d %H:%M:%S')`,
  `CREATE MACRO get_json_object(j, p) AS json_extract_string(j, p)`,
  `CREATE MACRO string(x) AS CAST(x AS VARCHAR)`,
  // Spark's `cast(x as timestamp)`: a number is seconds since the epoch, text is parsed, and what does not convert is null.
  `CREATE MACRO spark_timestamp(x) AS coalesce(make_timestamp(CAST(TRY_CAST(x AS DOUBLE) * 1000000 AS BIGINT)), TRY_CAST(CAST(x AS VARCHAR) AS TIMESTAMP))`,
];

/** `to_metadata(a, b, ...)`: a map of the named columns to their values as text, keyed by the columns' names. */
const TO_METADATA = /\bto_metadata\s*\(([^()]*)\)/gi;
const IDENTIFIER = /^\s*("[^"]+"|[A-Za-z_][A-Za-z0-9_]*)\s*$/;

function rewrite(query: string): string {
  return query.replace(TO_METADATA, (whole, args: string) => {
    const names = args.split(',');
    if (!names.every((n) => IDENTIFIER.test(n))) return whole;
    const cols = names.map((n) => n.trim());
    const keys = cols.map((c) => `'${c.replace(/"/g, '').replace(/'/g, "''")}'`);
    return `map([${keys.join(', ')}], [${cols.map((c) => `CAST(${c} AS VARCHAR)`).join(', ')}])`;
  });
}

/** A table a query reads: a resource's (`_cdf.events`), or the nodes with data in a view (`cdf_nodes(...)`). */
export type TableRef = { kind: 'resource'; name: string } | { kind: 'nodes'; name: string; space: string; externalId: string; version: string };

export interface ParsedQuery {
  /** The query as the engine runs it (Spark functions it lacks rewritten, `cdf_nodes(...)` calls replaced by their tables). */
  sql: string;
  tables: TableRef[];
}

let parser: Promise<DuckDBInstance> | undefined;

/** A connection of its own for each parse (one connection runs one statement at a time), to a database that holds nothing. */
function parserConnection(): Promise<DuckDBConnection> {
  parser ??= DuckDBInstance.create(':memory:', SETTINGS);
  return parser.then((db) => db.connect());
}

interface Named {
  tables: Array<{ schema: string; table: string }>;
  /** Byte offsets of `cast(... as timestamp)` expressions. */
  timestampCasts: number[];
  /** `dataset_id(...)` is called. */
  dataSetIds: boolean;
  /** Calls of table functions: the name, the byte offset of the call, its arguments as written (a literal or a double-quoted name). */
  calls: Array<{ name: string; at: number; args: Array<string | undefined> }>;
}

/** Base tables and table functions named anywhere in a serialized statement. */
function named(node: unknown, out: Named): void {
  if (Array.isArray(node)) {
    for (const n of node) named(n, out);
  } else if (node && typeof node === 'object') {
    const o = node as Record<string, any>;
    if (o.type === 'BASE_TABLE' && typeof o.table_name === 'string') out.tables.push({ schema: String(o.schema_name ?? ''), table: o.table_name });
    if (o.class === 'CAST' && o.cast_type?.id === 'TIMESTAMP' && !o.try_cast) out.timestampCasts.push(Number(o.query_location));
    if (o.class === 'FUNCTION' && String(o.function_name).toLowerCase() === 'dataset_id') out.dataSetIds = true;
    if (o.type === 'TABLE_FUNCTION' && o.function?.function_name) {
      const args = (o.function.children ?? []).map((c: any) =>
        c.class === 'CONSTANT' && typeof c.value?.value === 'string' ? c.value.value : c.class === 'COLUMN_REF' && c.column_names?.length === 1 ? c.column_names[0] : undefined,
      );
      out.calls.push({ name: String(o.function.function_name).toLowerCase(), at: Number(o.function.query_location), args });
    }
    for (const v of Object.values(o)) named(v, out);
  }
}

/** The character offset just past the call that starts at character `start` (its parentheses balanced, quotes skipped). */
function callEnd(sql: string, start: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = start; i < sql.length; i++) {
    const c = sql[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return sql.length;
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Parses a query, or refuses it with a 400 giving the position (line and column, from 1) of what does not
 * parse. `at` names the query in the message.
 */
export async function parseQuery(query: string, at: string): Promise<ParsedQuery> {
  const sql = rewrite(query).replace(/[\s;]+$/, '');
  const connection = await parserConnection();
  let reader;
  try {
    reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  } finally {
    connection.closeSync();
  }
  const parsed = JSON.parse(String(reader.getRows()[0][0])) as { error: boolean; error_message?: string; position?: string; statements?: unknown[] };
  if (parsed.error) {
    const message = parsed.error_message ?? 'the query does not parse';
    if (/Only SELECT/i.test(message)) throw badRequest(`${at}: a transformation's query is one SELECT statement`);
    const where = parsed.position === undefined ? '' : ` (${positionOf(query, Number(parsed.position))})`;
    throw badRequest(`${at} does not parse: ${message}${where}`);
  }
  if ((parsed.statements?.length ?? 0) !== 1) throw badRequest(`${at}: a transformation's query is one SELECT statement`);
  const found: Named = { tables: [], timestampCasts: [], dataSetIds: false, calls: [] };
  named(parsed.statements, found);
  const tables = new Map<string, TableRef>();
  for (const t of found.tables) {
    if (t.schema.toLowerCase() !== '_cdf') continue;
    const name = t.table.toLowerCase();
    if (!isSourceTable(name)) throw badRequest(`${at}: there is no table _cdf.${t.table}; the tables are ${Object.keys(SOURCE_TABLES).map((n) => `_cdf.${n}`).join(', ')}, and cdf_nodes("space", "view", "version")`);
    tables.set(name, { kind: 'resource', name });
  }
  if (found.dataSetIds) tables.set('datasets', { kind: 'resource', name: 'datasets' });
  const bytes = Buffer.from(sql);
  const chars = (offset: number) => bytes.subarray(0, offset).toString().length;
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const call of found.calls.filter((c) => c.name === 'cdf_nodes')) {
    const [space, externalId, version] = call.args;
    if (call.args.length !== 3 || !space || !externalId || !version) throw badRequest(`${at}: cdf_nodes takes a view as three names: cdf_nodes("space", "view", "version")`);
    const name = `nodes:${space}/${externalId}/${version}`;
    tables.set(name, { kind: 'nodes', name, space, externalId, version });
    const start = chars(call.at);
    edits.push({ start, end: callEnd(sql, start), text: `_cdf.${quoted(name)}` });
  }
  for (const offset of found.timestampCasts) {
    const start = chars(offset);
    const end = callEnd(sql, start);
    const cast = /^cast\s*\(([\s\S]*)\s+as\s+timestamp\s*\)$/i.exec(sql.slice(start, end));
    if (cast) edits.push({ start, end, text: `spark_timestamp(${cast[1]})` });
  }
  // From the last edit back, so that the offsets of the earlier ones stay right; of two nested casts the inner one is rewritten.
  let rewritten = sql;
  let before = Infinity;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    if (edit.end > before) continue;
    rewritten = `${rewritten.slice(0, edit.start)}${edit.text}${rewritten.slice(edit.end)}`;
    before = edit.start;
  }
  return { sql: rewritten, tables: [...tables.values()] };
}

/** "line 2, position 5" for a character offset of the query (the rewrite keeps offsets before any `to_metadata`). */
function positionOf(query: string, offset: number): string {
  const before = query.slice(0, Math.max(0, Math.min(offset, query.length)));
  const lines = before.split('\n');
  return `line ${lines.length}, position ${lines[lines.length - 1].length + 1}`;
}

export interface ResultColumn {
  name: string;
  sqlType: string;
  type: string | { type: string };
  nullable: boolean;
}

export interface QueryResult {
  columns: ResultColumn[];
  rows: Array<Record<string, unknown>>;
  /** Rows read from each table, by its name (`events`, `nodes:space/view/version`). */
  read: Record<string, number>;
}

export interface RunOptions {
  /** Reads the rows of a table as JSON objects, at most `limit` of them (all when undefined), with its columns. */
  load(table: TableRef, limit: number | undefined): Promise<{ columns: readonly Column[]; items: unknown[] }>;
  sourceLimit?: number;
  /** Rows of the result kept; a run with more is refused (`JobFailure` by the caller). */
  limit: number;
  signal?: AbortSignal;
  /** Longest time the run may take, after which its query is interrupted. */
  timeoutMs: number;
}

/** The API's name of a DuckDB type, as the schema of a preview gives it. */
function typeName(sqlType: string): string | { type: string } {
  if (sqlType.endsWith('[]')) return { type: 'array' };
  if (sqlType.startsWith('MAP')) return { type: 'map' };
  if (sqlType.startsWith('STRUCT')) return { type: 'struct' };
  const simple: Record<string, string> = {
    BIGINT: 'long',
    INTEGER: 'integer',
    SMALLINT: 'short',
    TINYINT: 'byte',
    HUGEINT: 'long',
    DOUBLE: 'double',
    FLOAT: 'float',
    BOOLEAN: 'boolean',
    VARCHAR: 'string',
    TIMESTAMP: 'timestamp',
    'TIMESTAMP WITH TIME ZONE': 'timestamp',
    DATE: 'date',
  };
  return simple[sqlType] ?? (sqlType.startsWith('DECIMAL') ? 'decimal' : 'string');
}

/**
 * A DuckDB value as JSON: timestamps as milliseconds since the epoch, maps as objects, 64-bit integers and
 * decimals as numbers; dates, times, intervals and the rest as DuckDB writes them.
 */
export function jsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) return Number(value.micros / 1000n);
  if (value instanceof DuckDBTimestampMillisecondsValue) return Number(value.millis);
  if (value instanceof DuckDBDecimalValue) return value.toDouble();
  if (value instanceof DuckDBMapValue) return Object.fromEntries(value.entries.map((e) => [String(jsonValue(e.key)), jsonValue(e.value)]));
  if (value instanceof DuckDBListValue) return value.items.map(jsonValue);
  if (value instanceof DuckDBStructValue) return Object.fromEntries(Object.entries(value.entries).map(([k, v]) => [k, jsonValue(v)]));
  if (typeof value === 'object') return String(value);
  return value;
}

/** Runs a parsed query over freshly loaded tables in a database of its own. */
export async function runQuery(parsed: ParsedQuery, options: RunOptions): Promise<QueryResult> {
  const read: Record<string, number> = {};
  const instance = await DuckDBInstance.create(':memory:', SETTINGS);
  try {
    const connection = await instance.connect();
    const stop = () => connection.interrupt();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', stop);
    try {
      await connection.run('CREATE SCHEMA _cdf');
      for (const macro of MACROS) await connection.run(macro);
      for (const table of parsed.tables) {
        const { columns, items } = await options.load(table, options.sourceLimit);
        read[table.name] = items.length;
        const staging = `staging_${Object.keys(read).length}`;
        await connection.run(`CREATE TABLE ${staging} (j JSON)`);
        const appender = await connection.createAppender(staging);
        for (const item of items) {
          appender.appendVarchar(JSON.stringify(item));
          appender.endRow();
        }
        appender.closeSync();
        await connection.run(`CREATE TABLE _cdf.${quoted(table.name)} AS SELECT ${columns.map(columnExpr).join(', ')} FROM ${staging}`);
        await connection.run(`DROP TABLE ${staging}`);
        for (const fn of Object.hasOwn(FUNCTION_TABLES, table.name) ? FUNCTION_TABLES[table.name].functions : []) await connection.run(fn);
      }
      // On lines of its own, so that a comment closing the query does not swallow the wrapping.
      const reader = await connection.runAndReadAll(`SELECT * FROM (\n${parsed.sql}\n) AS q LIMIT ${options.limit + 1}`).catch((error: unknown) => {
        throw timedOut ? new QueryFailed(`the query took longer than ${options.timeoutMs / 1000} s and was stopped`) : error;
      });
      const names = reader.columnNames();
      const types = reader.columnTypes().map(String);
      const columns = names.map((name, i) => ({ name, sqlType: types[i], type: typeName(types[i]), nullable: true }));
      const rows = reader.getRows().map((row) => Object.fromEntries(row.map((v, i) => [names[i], jsonValue(v)])));
      return { columns, rows, read };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
      connection.closeSync();
    }
  } catch (error) {
    if (error instanceof Error && !(error instanceof ApiError) && !(error instanceof QueryFailed)) throw new QueryFailed(error.message.split('\n')[0]);
    throw error;
  } finally {
    instance.closeSync();
  }
}

/** The engine refused or failed the query as it ran (a permission error, a type error, an interrupt): its first line, without the SQL it ran. */
export class QueryFailed extends Error {
  override readonly name = 'QueryFailed';
}
