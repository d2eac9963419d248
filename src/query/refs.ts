/**
 * Item references `{id}` / `{externalId}`: checking their form, finding duplicates in a request, and
 * resolving them to internal ids in one resource table, with `missing` for the unknown ones.
 */
import { badRequest, duplicatedItems, formatPath, missingItems } from '../http/errors.js';
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

export type Ref = { id: number } | { externalId: string } | { instanceId: InstanceId };

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
  if (dup.length) throw duplicatedItems(dup, status);
}

const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * Maps of known ids, external ids and instance ids (to internal id) among the given references. With
 * `where` (a condition on the rows, naming the table by its name), only rows meeting it are known.
 */
export async function lookupRefs(db: Queryable, table: string, projectId: number, refs: readonly Ref[], where?: Sql) {
  const ids = refs.filter((r): r is { id: number } => 'id' in r).map((r) => r.id);
  const externalIds = refs.filter((r): r is { externalId: string } => 'externalId' in r).map((r) => r.externalId);
  const instanceIds = refs.filter((r): r is { instanceId: InstanceId } => 'instanceId' in r).map((r) => r.instanceId);
  const byId = new Set<number>();
  const byExternalId = new Map<string, number>();
  const byInstanceId = new Map<string, number>();
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
  return { byId, byExternalId, byInstanceId };
}

/** The id a reference names among what lookupRefs found; undefined when it names nothing found. */
export function resolvedId(r: Ref, found: Awaited<ReturnType<typeof lookupRefs>>): number | undefined {
  if ('id' in r) return found.byId.has(r.id) ? r.id : undefined;
  if ('externalId' in r) return found.byExternalId.get(r.externalId);
  return found.byInstanceId.get(refKey(r));
}

/**
 * Resolves references to internal ids, in request order. Unknown references (and, with `where`, those to
 * rows not meeting it) are a 400 with `missing`, or are left out when `ignoreUnknownIds` is set.
 */
export async function resolveRefs(db: Queryable, table: string, projectId: number, refs: readonly Ref[], ignoreUnknownIds = false, where?: Sql): Promise<number[]> {
  const found = await lookupRefs(db, table, projectId, refs, where);
  const resolved: number[] = [];
  const missing: Ref[] = [];
  for (const r of refs) {
    const id = resolvedId(r, found);
    if (id === undefined) missing.push(r);
    else resolved.push(id);
  }
  if (missing.length && !ignoreUnknownIds) throw missingItems(missing);
  return resolved;
}

/** The given references that name stored items, each with the item's id (for 409 `duplicated` on create and update). */
export async function existingRefs(db: Queryable, table: string, projectId: number, refs: readonly Ref[]): Promise<Array<{ ref: Ref; id: number }>> {
  const found = await lookupRefs(db, table, projectId, refs);
  const out: Array<{ ref: Ref; id: number }> = [];
  for (const ref of refs) {
    const id = resolvedId(ref, found);
    if (id !== undefined) out.push({ ref, id });
  }
  return out;
}

/**
 * The identifiers items claim (their `externalId`, and their `instanceId` where the resource has one), which
 * must be unique in a project: 409 with `duplicated` when the request claims one twice.
 */
export function claimedRefs(items: ReadonlyArray<{ externalId?: unknown; instanceId?: unknown }>): Ref[] {
  const refs: Ref[] = [];
  for (const item of items) {
    if (typeof item.externalId === 'string') refs.push({ externalId: item.externalId });
    const n = item.instanceId as InstanceId | null | undefined;
    if (n) refs.push({ instanceId: { space: n.space, externalId: n.externalId } });
  }
  const repeated = repeatedRefs(refs);
  if (repeated.length) throw duplicatedItems(repeated);
  return refs;
}
