/**
 * Data model definitions: the views a data model lists (by reference, or by definition to apply with it),
 * the limits, and the read form. Every (space, externalId, version) is a data model of its own; applying
 * one that exists replaces its name, description and views.
 */
import { isDeepStrictEqual } from 'node:util';
import type { DataModelCreate, DataModelRead } from './data-model-schema.js';
import { checkNoDuplicates, fail, viewKey, viewRef, type Path, type ViewId } from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import type { SchemaMetadata } from './metadata.js';
import type { ViewRead } from './view-schema.js';
import { normalizeView, type ViewDefinition } from './views.js';

export interface DataModelDefinition {
  space: string;
  externalId: string;
  version: string;
  name?: string;
  description?: string;
  views: ViewId[];
}

export interface NormalizedDataModel {
  definition: DataModelDefinition;
  /** Views the data model defines in place, to be applied in the same request. */
  inlineViews: ViewDefinition[];
}

/** The definition of one data model of an apply request; a 400 naming the place when it breaks a rule. */
export function normalizeDataModel(raw: DataModelCreate, path: Path): NormalizedDataModel {
  const entries = raw.views ?? [];
  if (entries.length > DM_LIMITS.dataModelViews) fail([...path, 'views'], `a data model lists at most ${DM_LIMITS.dataModelViews} views, got ${entries.length}`);
  const views: ViewId[] = [];
  const inlineViews: ViewDefinition[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    const where = [...path, 'views', i];
    const id: ViewId = { space: entry.space, externalId: entry.externalId, version: entry.version };
    if (seen.has(viewKey(id))) fail(where, `the view ${viewKey(id)} is listed twice`);
    seen.add(viewKey(id));
    views.push(id);
    if (!('type' in entry)) inlineViews.push(normalizeView(entry, where));
  });
  const definition: DataModelDefinition = { space: raw.space, externalId: raw.externalId, version: raw.version, views };
  if (raw.name !== undefined) definition.name = raw.name;
  if (raw.description !== undefined) definition.description = raw.description;
  return { definition, inlineViews };
}

/**
 * The data models of an apply request, in order; a 400 when one breaks a rule, repeats another, or defines
 * a view another entry of the request defines differently.
 */
export function normalizeDataModels(items: readonly DataModelCreate[]): NormalizedDataModel[] {
  checkNoDuplicates(items, viewKey, (m) => ({ space: m.space, externalId: m.externalId, version: m.version }));
  const models = items.map((item, i) => normalizeDataModel(item, ['items', i]));
  const defined = new Map<string, ViewDefinition>();
  models.forEach((m, i) =>
    m.inlineViews.forEach((v) => {
      const key = viewKey(v);
      const before = defined.get(key);
      if (before && !isDeepStrictEqual(before, v)) fail(['items', i, 'views'], `the view ${key} is defined twice in the request, differently`);
      defined.set(key, v);
    }),
  );
  return models;
}

/** The read form; with `inline`, each listed view as a full definition where `inline` gives one. */
export function dataModelReadForm(def: DataModelDefinition, meta: SchemaMetadata, inline?: (id: ViewId) => ViewRead | undefined): DataModelRead {
  const out: Record<string, unknown> = { space: def.space, externalId: def.externalId, version: def.version };
  if (def.name !== undefined) out.name = def.name;
  if (def.description !== undefined) out.description = def.description;
  out.views = def.views.flatMap((id): Array<DataModelRead['views'][number]> => {
    if (!inline) return [viewRef(id)];
    const view = inline(id);
    return view ? [view] : [];
  });
  return Object.assign(out, meta) as DataModelRead;
}
