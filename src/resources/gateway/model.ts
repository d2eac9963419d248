/**
 * The Postgres gateway's users and their tables, declared once (see resources/model.ts). A user is keyed by
 * the username the service generated for it (on PostgreSQL, also the name of its login role and of its
 * schema); its tables live under it, keyed by their names. The session a user was created with is kept
 * hidden: it is the scope the user reads in.
 */
import { Type } from '@sinclair/typebox';
import { defineModel, field } from '../model.js';

export const GATEWAY_LIMITS = {
  /** Users per create, update and delete request; by-ids reads take `byIds`. */
  userWriteItems: 1,
  byIds: 10,
  filterLimit: 10,
  listLimit: 100,
  tableWriteItems: 10,
  tablename: 60,
  nonce: 10_000,
} as const;

/**
 * A username as the service generates it and as a request may name one: a PostgreSQL identifier that needs
 * no quoting (lower-case letters, digits, underscores; at most 63 bytes, the length PostgreSQL keeps).
 */
export const USERNAME_PATTERN = '^[a-z_][a-z0-9_]{0,62}$';
export const Username = Type.String({ minLength: 1, maxLength: 63, pattern: USERNAME_PATTERN });

/** A table's name: letters, digits, underscores and hyphens (a hyphen needs quoting in SQL). */
export const Tablename = Type.String({ minLength: 1, maxLength: GATEWAY_LIMITS.tablename, pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' });

export const COLUMN_TYPES = [
  'TEXT',
  'VARCHAR',
  'BOOL',
  'BIGINT',
  'DOUBLE PRECISION',
  'REAL',
  'TIMESTAMPTZ',
  'JSON',
  'TEXT[]',
  'VARCHAR[]',
  'BOOL[]',
  'BIGINT[]',
  'DOUBLE PRECISION[]',
  'REAL[]',
  'JSON[]',
  'BYTEA',
] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];
export const Columns = Type.Record(Type.String({ minLength: 1, maxLength: 63 }), Type.Object({ type: Type.Union(COLUMN_TYPES.map((t) => Type.Literal(t))) }, { additionalProperties: false }), {
  maxProperties: 1000,
});

const Grant = Type.Object({ sessionId: Type.Integer(), sessionKey: Type.String() });

export const gatewayUserModel = defineModel({
  noun: 'postgres gateway user',
  acl: 'postgresGatewayAcl',
  table: 'gateway_users',
  alias: 'gwu',
  key: ['username'],
  fields: {
    username: field.string(Username, { notNull: true, patch: false, query: { maxValueLength: 63, sortable: true } }),
    sessionId: field.integer(Type.Integer(), { notNull: true, patch: 'required' }),
    sessionGrant: field.json(Grant, { hidden: true, patch: false }),
  },
});

/** `raw_rows`: rows of a raw table; `view`: instances of a data modeling view; `built_in`: a resource type every user has. */
export const TABLE_TYPES = ['raw_rows', 'view', 'built_in'] as const;

export const gatewayTableModel = defineModel({
  noun: 'postgres gateway table',
  acl: 'postgresGatewayAcl',
  table: 'gateway_tables',
  alias: 'gwt',
  key: ['tablename'],
  parent: { model: gatewayUserModel, column: 'user_id' },
  fields: {
    tablename: field.string(Tablename, { notNull: true, patch: false, query: { maxValueLength: GATEWAY_LIMITS.tablename, sortable: true } }),
    type: field.string(Type.Union(TABLE_TYPES.map((t) => Type.Literal(t))), { notNull: true, patch: false, query: { maxValueLength: 16 } }),
    options: field.json(Type.Record(Type.String(), Type.String()), { patch: false }),
    columns: field.json(Columns, { patch: false }),
  },
});
