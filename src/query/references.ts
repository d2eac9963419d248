/**
 * References from one resource to another (an event's data set and assets, a filter on `dataSetIds`), resolved
 * the same way everywhere: `{id}` or `{externalId}`, among the items the request sees (query/visibility.ts),
 * unknown and unseen ones alike refused with 400 `missing`.
 */
import { badRequest, formatPath, missingItems } from '../http/errors.js';
import type { Queryable } from '../storage/store.js';
import type { Values } from '../storage/items.js';
import { checkRef, lookupRefs, type Ref, type RefInput } from './refs.js';
import type { Visible } from './visibility.js';

/**
 * Resolves `{id}`/`{externalId}` references into ids of visible items; any other one is a 400 with `missing`.
 * `{id: 0}` names no item (see FilterId): it resolves to nothing and is not missing.
 */
export async function resolveReferences(db: Queryable, visible: Visible, projectId: number, refs: readonly RefInput[], path: Array<string | number>): Promise<number[]> {
  const checked: Ref[] = refs.map((r, i) => checkRef(r, [...path, i])).filter((r) => !('id' in r && r.id === 0));
  const { byId, byExternalId } = await lookupRefs(db, visible.table, projectId, checked, visible.where);
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


/**
 * Refuses a write whose items refer, in `field` (an id or a list of ids), to ids that are not of visible
 * items: 400 with `missing`, the message naming the first item. With `previous` (an update), ids an item
 * already held are not checked again, so items still referring to since-deleted (or unseen) ones stay
 * editable.
 */
export async function requireExistingIn(
  db: Queryable,
  visible: Visible,
  projectId: number,
  values: readonly Values[],
  field: string,
  previous?: readonly Values[],
): Promise<void> {
  const { noun } = visible;
  const idsOf = (v: Values | undefined): number[] => {
    const x = v?.[field];
    return typeof x === 'number' ? [x] : Array.isArray(x) ? (x as number[]) : [];
  };
  const introduced = values.map((v, i) => {
    const before = new Set(idsOf(previous?.[i]));
    return idsOf(v).filter((id) => !before.has(id));
  });
  const wanted = [...new Set(introduced.flat())];
  if (wanted.length === 0) return;
  const { byId } = await lookupRefs(
    db,
    visible.table,
    projectId,
    wanted.map((id) => ({ id })),
    visible.where,
  );
  const unknown = wanted.filter((id) => !byId.has(id));
  if (unknown.length === 0) return;
  const isUnknown = new Set(unknown);
  const index = introduced.findIndex((ids) => ids.some((id) => isUnknown.has(id)));
  const first = introduced[index].find((id) => isUnknown.has(id));
  const more = unknown.length > 1 ? ` (${unknown.length - 1} more ${noun} id${unknown.length > 2 ? 's are' : ' is'} unknown too)` : '';
  throw badRequest(`${formatPath(['items', index, field])}: no ${noun} with id ${first}${more}`, { missing: unknown.map((id) => ({ id })) });
}
