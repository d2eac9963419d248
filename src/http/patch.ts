/**
 * Update-request patches (`set`, `setNull`, `add`, `remove`), applied the same way by every resource.
 */
import { METADATA_LIMITS, type MetadataLimits } from './common-schemas.js';
import { badRequest, formatPath } from './errors.js';

type Path = Array<string | number>;

export interface NullablePatch<T> {
  set?: T;
  setNull?: boolean;
}

export function applyNullablePatch<T>(current: T | null, patch: NullablePatch<T> | undefined, path: Path): T | null {
  if (!patch) return current;
  const hasSet = patch.set !== undefined;
  const hasNull = patch.setNull !== undefined;
  if (hasSet === hasNull) throw badRequest(`${formatPath(path)}: give exactly one of "set" and "setNull"`);
  if (hasNull) {
    if (patch.setNull !== true) throw badRequest(`${formatPath([...path, 'setNull'])}: must be true`);
    return null;
  }
  return patch.set as T;
}

/**
 * `{modify: {field: {set} | {setNull}}}` on an object of optional fields: each named field changes, the
 * others stay. An object left with no field is no value.
 */
export function applyModifyPatch(
  current: Record<string, unknown> | null,
  patch: { modify?: Record<string, NullablePatch<unknown>> } | undefined,
  path: Path,
): Record<string, unknown> | null {
  if (!patch?.modify) return current;
  const next: Record<string, unknown> = { ...(current ?? {}) };
  for (const [field, change] of Object.entries(patch.modify)) {
    const value = applyNullablePatch(next[field] ?? null, change, [...path, field]);
    if (value === null) delete next[field];
    else next[field] = value;
  }
  return Object.keys(next).length ? next : null;
}

export interface MapPatch {
  set?: Record<string, string>;
  add?: Record<string, string>;
  remove?: string[];
}

export function applyMetadataPatch(
  current: Record<string, string> | null,
  patch: MapPatch | undefined,
  path: Path,
  limits: MetadataLimits = METADATA_LIMITS,
): Record<string, string> | null {
  if (!patch) return current;
  if (patch.set !== undefined && (patch.add !== undefined || patch.remove !== undefined)) {
    throw badRequest(`${formatPath(path)}: "set" cannot be combined with "add" or "remove"`);
  }
  if (patch.set === undefined && patch.add === undefined && patch.remove === undefined) {
    throw badRequest(`${formatPath(path)}: give "set", or "add" and/or "remove"`);
  }
  let next: Record<string, string>;
  if (patch.set !== undefined) next = { ...patch.set };
  else {
    next = { ...(current ?? {}) };
    for (const k of patch.remove ?? []) delete next[k];
    Object.assign(next, patch.add ?? {});
  }
  checkMetadata(next, path, limits);
  return next;
}

/** Limits on a whole metadata map that a schema cannot state (total size, and the key count after a patch). */
export function checkMetadata(
  metadata: Record<string, string> | undefined | null,
  path: Path,
  limits: MetadataLimits = METADATA_LIMITS,
): void {
  if (!metadata) return;
  const keys = Object.keys(metadata);
  if (keys.length > limits.keys) {
    throw badRequest(`${formatPath(path)}: at most ${limits.keys} keys are allowed, got ${keys.length}`);
  }
  let total = 0;
  for (const k of keys) total += Buffer.byteLength(k) + Buffer.byteLength(metadata[k]);
  if (total > limits.totalBytes) {
    throw badRequest(`${formatPath(path)}: keys and values total ${total} bytes; at most ${limits.totalBytes} are allowed`);
  }
}

export interface ArrayPatch<T> {
  set?: T[];
  add?: T[];
  remove?: T[];
}

export function applyArrayPatch<T>(current: T[] | null, patch: ArrayPatch<T> | undefined, path: Path, maxItems: number): T[] | null {
  if (!patch) return current;
  if (patch.set !== undefined && (patch.add !== undefined || patch.remove !== undefined)) {
    throw badRequest(`${formatPath(path)}: "set" cannot be combined with "add" or "remove"`);
  }
  if (patch.set === undefined && patch.add === undefined && patch.remove === undefined) {
    throw badRequest(`${formatPath(path)}: give "set", or "add" and/or "remove"`);
  }
  let next: T[];
  if (patch.set !== undefined) next = [...patch.set];
  else {
    const removed = new Set(patch.remove ?? []);
    next = (current ?? []).filter((v) => !removed.has(v));
    for (const v of patch.add ?? []) if (!next.includes(v)) next.push(v);
  }
  if (next.length > maxItems) throw badRequest(`${formatPath(path)}: the result would have ${next.length} items; at most ${maxItems} are allowed`);
  return next;
}
