/**
 * References from one resource to another (an event's data set, a filter on `dataSetIds`), resolved the
 * same way everywhere: `{id}` or `{externalId}`, unknown ones refused with 400 `missing`.
 */
import { missingItems } from '../http/errors.js';
import type { Db } from '../storage/db.js';
import { checkRef, lookupRefs, type Ref, type RefInput } from './refs.js';

/** Resolves `{id}`/`{externalId}` references into ids of `table`; any unknown one is a 400 with `missing`. */
export function resolveReferences(db: Db, table: string, projectId: number, refs: readonly RefInput[], path: Array<string | number>): number[] {
  const checked: Ref[] = refs.map((r, i) => checkRef(r, [...path, i]));
  const { byId, byExternalId } = lookupRefs(db, table, projectId, checked);
  const missing: Ref[] = [];
  const ids: number[] = [];
  for (const r of checked) {
    const id = 'id' in r ? (byId.has(r.id) ? r.id : undefined) : 'externalId' in r ? byExternalId.get(r.externalId) : undefined;
    if (id === undefined) missing.push(r);
    else ids.push(id);
  }
  if (missing.length) throw missingItems(missing);
  return [...new Set(ids)];
}

/** Refuses a write that refers to ids of `table` that do not exist, with 400 `missing`. */
export function requireExisting(db: Db, table: string, projectId: number, ids: Iterable<number | null | undefined>): void {
  const wanted = [...new Set([...ids].filter((x): x is number => typeof x === 'number'))];
  if (wanted.length === 0) return;
  const { byId } = lookupRefs(
    db,
    table,
    projectId,
    wanted.map((id) => ({ id })),
  );
  const missing = wanted.filter((id) => !byId.has(id)).map((id) => ({ id }));
  if (missing.length) throw missingItems(missing);
}
