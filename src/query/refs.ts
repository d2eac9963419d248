/**
 * Item references `{id}` / `{externalId}`: checking their form, finding duplicates in a request, and
 * resolving them to internal ids in one resource table, with `missing` for the unknown ones.
 */
import { badRequest, duplicatedItems, formatPath, missingItems } from '../http/errors.js';
import { all, type Db } from '../storage/db.js';
import { Sql, sql } from '../storage/sql.js';

export interface RefInput {
  id?: number;
  externalId?: string;
}

export type Ref = { id: number } | { externalId: string };

export function checkRef(ref: RefInput, path: Array<string | number>): Ref {
  const hasId = ref.id !== undefined;
  const hasExternal = ref.externalId !== undefined;
  if (hasId === hasExternal) throw badRequest(`${formatPath(path)}: give exactly one of "id" and "externalId"`);
  return hasId ? { id: ref.id! } : { externalId: ref.externalId! };
}

export function refKey(ref: Ref): string {
  return 'id' in ref ? `i:${ref.id}` : `x:${ref.externalId}`;
}

/** 400 with `duplicated` when the request names the same reference twice. */
export function rejectDuplicateRefs(refs: readonly Ref[]): void {
  const seen = new Set<string>();
  const dup: Ref[] = [];
  for (const r of refs) {
    const k = refKey(r);
    if (seen.has(k)) dup.push(r);
    seen.add(k);
  }
  if (dup.length) throw duplicatedItems(dup, 400);
}

const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** Maps of known ids and external ids (to internal id) among the given references. */
export function lookupRefs(db: Db, table: string, projectId: number, refs: readonly Ref[]) {
  const ids = refs.filter((r): r is { id: number } => 'id' in r).map((r) => r.id);
  const externalIds = refs.filter((r): r is { externalId: string } => 'externalId' in r).map((r) => r.externalId);
  const byId = new Set<number>();
  const byExternalId = new Map<string, number>();
  const t = Sql.raw(table);
  for (const part of chunks(ids)) {
    for (const row of all<{ id: number }>(db, sql`SELECT id FROM ${t} WHERE project_id = ${projectId} AND id IN (${part})`)) byId.add(row.id);
  }
  for (const part of chunks(externalIds)) {
    const rows = all<{ id: number; external_id: string }>(
      db,
      sql`SELECT id, external_id FROM ${t} WHERE project_id = ${projectId} AND external_id IN (${part})`,
    );
    for (const row of rows) byExternalId.set(row.external_id, row.id);
  }
  return { byId, byExternalId };
}

/**
 * Resolves references to internal ids, in request order. Unknown references are a 400 with `missing`, or
 * are left out when `ignoreUnknownIds` is set.
 */
export function resolveRefs(db: Db, table: string, projectId: number, refs: readonly Ref[], ignoreUnknownIds = false): number[] {
  const { byId, byExternalId } = lookupRefs(db, table, projectId, refs);
  const resolved: number[] = [];
  const missing: Ref[] = [];
  for (const r of refs) {
    const id = 'id' in r ? (byId.has(r.id) ? r.id : undefined) : byExternalId.get(r.externalId);
    if (id === undefined) missing.push(r);
    else resolved.push(id);
  }
  if (missing.length && !ignoreUnknownIds) throw missingItems(missing);
  return resolved;
}

/** Existing external ids among the given ones (for 409 `duplicated` on create and update). */
export function existingExternalIds(db: Db, table: string, projectId: number, externalIds: readonly string[]): Map<string, number> {
  return lookupRefs(
    db,
    table,
    projectId,
    externalIds.map((externalId) => ({ externalId })),
  ).byExternalId;
}
