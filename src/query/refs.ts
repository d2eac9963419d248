/**
 * Item references `{id}` / `{externalId}` / `{instanceId}`, or the fields of a resource's declared key
 * (`{externalId}` of a resource keyed by it alone, `{version}` under a parent): checking their form,
 * finding duplicates in a request, and resolving them to internal ids in one resource table, with
 * `missing` for the unknown ones.
 */
import { badRequest, duplicatedItems, formatPath, missingItems, type IdentifierRef } from '../http/errors.js';
import type { KeyField } from '../storage/items.js';
import type { Queryable } from '../storage/store.js';
import { Sql, sql } from '../storage/sql.js';

export interface InstanceId {
  space: string;
  externalId: string;
}

export interface RefInput {
  id?: number;
  externalId?: string;
  instanceId?: InstanceId;
}

/** A reference by a declared key (ItemTable.key): its fields' values, as the request gives them. */
export type KeyRef = { key: Readonly<Record<string, string | number>> };

/** A reference by a declared key as a request gives it: `{externalId}`, `{version}`. */
export type KeyInput = Readonly<Record<string, string | number>>;

export type Ref = { id: number } | { externalId: string } | { instanceId: InstanceId } | KeyRef;

/** A reference as requests and answers (`missing`, `duplicated`) give it. */
export function refBody(ref: Ref): IdentifierRef {
  return 'key' in ref ? { ...ref.key } : ref;
}

/** Checks that a reference gives every field of the declared key `key` (the request schema refuses others). */
export function checkKeyRef(ref: Record<string, unknown>, key: readonly KeyField[], path: Array<string | number>): KeyRef {
  if (key.some((f) => ref[f.name] === undefined)) throw badRequest(`${formatPath(path)}: give ${key.map((f) => `"${f.name}"`).join(' and ')}`);
  return { key: Object.fromEntries(key.map((f) => [f.name, ref[f.name] as string | number])) };
}

/** Checks that exactly one identifier is given; `instanceId` only where the resource has instance ids. */
export function checkRef(ref: RefInput, path: Array<string | number>, allowInstanceId = false): Ref {
  const given = [ref.id !== undefined, ref.externalId !== undefined, ref.instanceId !== undefined].filter(Boolean).length;
  if (given !== 1 || (!allowInstanceId && ref.instanceId !== undefined)) {
    throw badRequest(`${formatPath(path)}: give exactly one of "id"${allowInstanceId ? ', "externalId" and "instanceId"' : ' and "externalId"'}`);
  }
  if (ref.id !== undefined) return { id: ref.id };
  if (ref.externalId !== undefined) return { externalId: ref.externalId };
  return { instanceId: { space: ref.instanceId!.space, externalId: ref.instanceId!.externalId } };
}

export function refKey(ref: Ref): string {
  if ('id' in ref) return `i:${ref.id}`;
  if ('externalId' in ref) return `x:${ref.externalId}`;
  if ('key' in ref) return `k:${JSON.stringify(Object.values(ref.key))}`;
  return `n:${ref.instanceId.space}\u0000${ref.instanceId.externalId}`;
}

/** The references that repeat an earlier one, each once. */
function repeatedRefs(refs: readonly Ref[]): Ref[] {
  const seen = new Set<string>();
  const repeated = new Map<string, Ref>();
  for (const r of refs) {
    const k = refKey(r);
    if (seen.has(k)) repeated.set(k, r);
    seen.add(k);
  }
  return [...repeated.values()];
}

/** 400 (or the given status) with `duplicated` when the request names the same reference twice. */
export function rejectDuplicateRefs(refs: readonly Ref[], status: 400 | 422 = 400): void {
  const dup = repeatedRefs(refs);
  if (dup.length) throw duplicatedItems(dup.map(refBody), status);
}

const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * Maps of known ids, external ids, instance ids and declared keys (to internal id) among the given
 * references. With `where` (a condition on the rows, naming the table by its name), only rows meeting it
 * are known. `key` is the table's declared key, when references name items by it.
 */
export async function lookupRefs(db: Queryable, table: string, projectId: number, refs: readonly Ref[], where?: Sql, key?: readonly KeyField[]) {
  const ids = refs.filter((r): r is { id: number } => 'id' in r).map((r) => r.id);
  const externalIds = refs.filter((r): r is { externalId: string } => 'externalId' in r).map((r) => r.externalId);
  const instanceIds = refs.filter((r): r is { instanceId: InstanceId } => 'instanceId' in r).map((r) => r.instanceId);
  const keys = refs.filter((r): r is KeyRef => 'key' in r);
  const byId = new Set<number>();
  const byExternalId = new Map<string, number>();
  const byInstanceId = new Map<string, number>();
  const byKey = new Map<string, number>();
  const t = Sql.raw(table);
  const and = where ? sql` AND ${where}` : Sql.raw('');
  for (const part of chunks(ids)) {
    for (const row of await db.all<{ id: number }>(sql`SELECT id FROM ${t} WHERE project_id = ${projectId} AND id IN (${part})${and}`)) byId.add(row.id);
  }
  for (const part of chunks(externalIds)) {
    const rows = await db.all<{ id: number; external_id: string }>(sql`SELECT id, external_id FROM ${t} WHERE project_id = ${projectId} AND external_id IN (${part})${and}`,
    );
    for (const row of rows) byExternalId.set(row.external_id, row.id);
  }
  for (const part of chunks(instanceIds)) {
    const pairs = Sql.join(
      part.map((n) => sql`(${n.space}, ${n.externalId})`),
      ', ',
    );
    const rows = await db.all<{ id: number; instance_space: string; instance_external_id: string }>(sql`SELECT id, instance_space, instance_external_id FROM ${t} WHERE project_id = ${projectId} AND (instance_space, instance_external_id) IN (VALUES ${pairs})${and}`,
    );
    for (const row of rows) byInstanceId.set(refKey({ instanceId: { space: row.instance_space, externalId: row.instance_external_id } }), row.id);
  }
  if (keys.length && key) {
    // Compared field by field rather than as a row of VALUES, whose untyped parameters PostgreSQL reads as
    // text, which an integer key field would not equal.
    const columns = Sql.raw(key.map((f) => f.column).join(', '));
    for (const part of chunks(keys)) {
      const match =
        key.length === 1
          ? sql`${Sql.raw(key[0].column)} IN (${part.map((r) => r.key[key[0].name])})`
          : Sql.join(
              part.map((r) => sql`(${Sql.and(key.map((f) => sql`${Sql.raw(f.column)} = ${r.key[f.name]}`))})`),
              ' OR ',
            );
      const rows = await db.all<Record<string, string | number> & { id: number }>(sql`SELECT id, ${columns} FROM ${t} WHERE project_id = ${projectId} AND (${match})${and}`);
      for (const row of rows) byKey.set(refKey({ key: Object.fromEntries(key.map((f) => [f.name, row[f.column]])) }), row.id);
    }
  }
  return { byId, byExternalId, byInstanceId, byKey };
}

/** The id a reference names among what lookupRefs found; undefined when it names nothing found. */
export function resolvedId(r: Ref, found: Awaited<ReturnType<typeof lookupRefs>>): number | undefined {
  if ('id' in r) return found.byId.has(r.id) ? r.id : undefined;
  if ('externalId' in r) return found.byExternalId.get(r.externalId);
  if ('key' in r) return found.byKey.get(refKey(r));
  return found.byInstanceId.get(refKey(r));
}

/**
 * Resolves references to internal ids, in request order. Unknown references (and, with `where`, those to
 * rows not meeting it) are a 400 with `missing`, or are left out when `ignoreUnknownIds` is set.
 */
export async function resolveRefs(
  db: Queryable,
  table: string,
  projectId: number,
  refs: readonly Ref[],
  ignoreUnknownIds = false,
  where?: Sql,
  key?: readonly KeyField[],
): Promise<number[]> {
  const found = await lookupRefs(db, table, projectId, refs, where, key);
  const resolved: number[] = [];
  const missing: Ref[] = [];
  for (const r of refs) {
    const id = resolvedId(r, found);
    if (id === undefined) missing.push(r);
    else resolved.push(id);
  }
  if (missing.length && !ignoreUnknownIds) throw missingItems(missing.map(refBody));
  return resolved;
}

/** The given references that name stored items, each with the item's id (for 409 `duplicated` on create and update). */
export async function existingRefs(
  db: Queryable,
  table: string,
  projectId: number,
  refs: readonly Ref[],
  where?: Sql,
  key?: readonly KeyField[],
): Promise<Array<{ ref: Ref; id: number }>> {
  const found = await lookupRefs(db, table, projectId, refs, where, key);
  const out: Array<{ ref: Ref; id: number }> = [];
  for (const ref of refs) {
    const id = resolvedId(ref, found);
    if (id !== undefined) out.push({ ref, id });
  }
  return out;
}

/**
 * The identifiers items claim (their `externalId`, and their `instanceId` where the resource has one; the
 * fields of the declared `key` where there is one), which must be unique in a project (under the parent):
 * 409 with `duplicated` when the request claims one twice.
 */
export function claimedRefs(items: ReadonlyArray<Record<string, unknown>>, key?: readonly KeyField[]): Ref[] {
  const refs: Ref[] = [];
  for (const item of items) {
    if (key) {
      refs.push({ key: Object.fromEntries(key.map((f) => [f.name, item[f.name] as string | number])) });
      continue;
    }
    if (typeof item.externalId === 'string') refs.push({ externalId: item.externalId });
    const n = item.instanceId as InstanceId | null | undefined;
    if (n) refs.push({ instanceId: { space: n.space, externalId: n.externalId } });
  }
  const repeated = repeatedRefs(refs);
  if (repeated.length) throw duplicatedItems(repeated.map(refBody));
  return refs;
}
