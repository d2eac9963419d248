/**
 * Where the data modeling service keeps what it is given: a catalog of definitions (spaces, containers,
 * views, data models, each a row holding its canonical definition as JSON), one shared table of instances
 * with their base fields, and one table per container (`dmc_<container id>`) with a typed column per
 * property, created when the container is applied. A container's btree indexes and uniqueness constraints
 * are indexes of its table. Every key leads with the project and then the space.
 *
 * Node references (an instance's type, an edge's ends, direct relation values) are kept as one text,
 * `space` U+0001 `externalId`: a space never holds U+0001 and the separator sorts before every character a
 * space may hold, so the text orders as the pair does, and equality, indexes and joins see one column.
 */
import type { TableDef } from '../../storage/schema.js';
import { counterTable } from '../../storage/positions.js';

export const REF_SEPARATOR = '\u0001';

export const encodeRef = (r: { space: string; externalId: string }): string => `${r.space}${REF_SEPARATOR}${r.externalId}`;

export function decodeRef(text: string): { space: string; externalId: string } {
  const i = text.indexOf(REF_SEPARATOR);
  return { space: text.slice(0, i), externalId: text.slice(i + 1) };
}

const common = {
  project_id: { type: 'integer', notNull: true },
  space: { type: 'text', notNull: true },
  created_time: { type: 'integer', notNull: true },
  last_updated_time: { type: 'integer', notNull: true },
} as const;

export const dmTables: readonly TableDef[] = [
  {
    name: 'dm_spaces',
    columns: { id: { type: 'id' }, ...common, name: { type: 'text' }, description: { type: 'text' } },
    indexes: [{ name: 'dm_spaces_key', columns: ['project_id', 'space'], unique: true }],
  },
  {
    // `layout`: the column of each property and the database name of each index and constraint (see
    // container-tables.ts); `states`: the validity of bounds, indexes and constraints.
    name: 'dm_containers',
    columns: {
      id: { type: 'id' },
      ...common,
      external_id: { type: 'text', notNull: true },
      definition: { type: 'text', notNull: true },
      layout: { type: 'text', notNull: true },
      states: { type: 'text', notNull: true, default: "'{}'" },
    },
    indexes: [{ name: 'dm_containers_key', columns: ['project_id', 'space', 'external_id'], unique: true }],
  },
  {
    name: 'dm_views',
    columns: {
      id: { type: 'id' },
      ...common,
      external_id: { type: 'text', notNull: true },
      version: { type: 'text', notNull: true },
      definition: { type: 'text', notNull: true },
    },
    indexes: [{ name: 'dm_views_key', columns: ['project_id', 'space', 'external_id', 'version'], unique: true }],
  },
  {
    name: 'dm_data_models',
    columns: {
      id: { type: 'id' },
      ...common,
      external_id: { type: 'text', notNull: true },
      version: { type: 'text', notNull: true },
      definition: { type: 'text', notNull: true },
    },
    indexes: [{ name: 'dm_data_models_key', columns: ['project_id', 'space', 'external_id', 'version'], unique: true }],
  },
  {
    // One row per project whose containers or views have changed: a token replaced in the transaction of
    // every change to them, so a process holding the schema read under a token knows it still holds.
    name: 'dm_schema_versions',
    columns: { project_id: { type: 'integer', notNull: true }, token: { type: 'text', notNull: true } },
    indexes: [{ name: 'dm_schema_versions_key', columns: ['project_id'], unique: true }],
  },
  {
    // kind: 0 node, 1 edge. A deleted instance stays as a tombstone (deleted_time set, its container rows
    // gone) so that its identity keeps counting versions and statistics can report it.
    name: 'dm_instances',
    columns: {
      id: { type: 'id' },
      ...common,
      kind: { type: 'integer', notNull: true },
      external_id: { type: 'text', notNull: true },
      type_ref: { type: 'text' },
      start_ref: { type: 'text' },
      end_ref: { type: 'text' },
      version: { type: 'integer', notNull: true },
      deleted_time: { type: 'integer' },
      // The position of the instance's last change in the project's change feed (changes.ts).
      change_seq: { type: 'integer', notNull: true, default: '0' },
    },
    indexes: [
      { name: 'dm_instances_key', columns: ['project_id', 'space', 'kind', 'external_id'], unique: true },
      { name: 'dm_instances_order', columns: ['project_id', 'kind', 'id'] },
      { name: 'dm_instances_start', columns: ['project_id', 'start_ref'] },
      { name: 'dm_instances_end', columns: ['project_id', 'end_ref'] },
      { name: 'dm_instances_type', columns: ['project_id', 'type_ref'] },
      { name: 'dm_instances_changes', columns: ['project_id', 'change_seq', 'id'] },
    ],
  },
  {
    // What the service has put in a project's instances itself (`system-nodes`), with the digest of what was
    // seeded: seeded again when that changes.
    name: 'dm_seeds',
    columns: { project_id: { type: 'integer', notNull: true }, name: { type: 'text', notNull: true }, digest: { type: 'text', notNull: true } },
    indexes: [{ name: 'dm_seeds_key', columns: ['project_id', 'name'], unique: true }],
  },
  // The last position handed out in each project's change feed.
  counterTable('dm_changes'),
];
