/**
 * Data products: their own rules on top of the shared item operations. A product's schema space must be a
 * space the request sees; a version's views must be views of data modeling the request sees, each listed
 * once.
 */
import { badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import type { Values } from '../../storage/items.js';
import { createItems, fromModel, inWrite, underParent, updateItems, type ResourceSpec } from '../crud.js';
import { viewKey, type ViewId } from '../models/identifiers.js';
import { existingSpaces } from '../models/schema-store.js';
import { schemaSpaces, visibleSchema } from '../models/space-access.js';
import { dataProductModel, dataProductVersionModel } from './model.js';
import type { DataProductCreate, VersionCreate } from './schema.js';

type Path = Array<string | number>;

export const dataProductSpec: ResourceSpec<DataProductCreate> = {
  ...fromModel(dataProductModel),
  createValues: (item) => ({ schemaSpace: item.schemaSpace ?? item.externalId, isGoverned: item.isGoverned ?? false }),
};

export const versionSpec: ResourceSpec<VersionCreate> = {
  ...fromModel(dataProductVersionModel),
  createValues: (item) => ({ status: item.status ?? 'draft' }),
  check(values: Values, path: Path) {
    const seen = new Set<string>();
    for (const [i, view] of ((values.views as ViewId[] | null) ?? []).entries()) {
      const key = viewKey(view);
      if (seen.has(key)) throw badRequest(`${formatPath([...path, 'views', i])}: the view ${key} is listed more than once`);
      seen.add(key);
    }
  },
};

/** Refuses schema spaces that do not exist, or that the request cannot see, naming the first. */
async function requireSchemaSpaces(services: Services, projectId: number, items: readonly DataProductCreate[]): Promise<void> {
  const spaces = items.map((item) => (item.schemaSpace ?? item.externalId)!);
  const existing = await existingSpaces(services.db, projectId, spaces);
  const visible = schemaSpaces(services);
  for (const [i, space] of spaces.entries()) {
    if (existing.has(space) && (!visible || visible.has(space))) continue;
    const given = items[i].schemaSpace !== undefined;
    throw badRequest(
      `${formatPath(['items', i, given ? 'schemaSpace' : 'externalId'])}: the space ${JSON.stringify(space)} does not exist` +
        (given ? '' : ' (a data product without a schemaSpace has its externalId as its schema space)'),
    );
  }
}

export function createDataProducts(services: Services, projectId: number, items: readonly DataProductCreate[]) {
  return inWrite(services, async (services) => {
    await requireSchemaSpaces(services, projectId, items);
    return createItems(dataProductSpec, services, projectId, items);
  });
}

/** Refuses views that are not views of data modeling the request sees, naming the first. */
async function requireViews(services: Services, projectId: number, lists: ReadonlyArray<{ views: readonly ViewId[] | undefined; path: Path }>): Promise<void> {
  if (lists.every((l) => !l.views?.length)) return;
  const schema = await visibleSchema(services, projectId, services.db);
  for (const { views, path } of lists) {
    for (const [i, view] of (views ?? []).entries()) {
      if (!schema.view(view)) throw badRequest(`${formatPath([...path, i])}: the view ${viewKey(view)} does not exist`);
    }
  }
}

/** The versions of the data product `externalId`: a 400 naming it when there is no such product. */
export function versionsOf(services: Services, projectId: number, externalId: string) {
  return underParent(versionSpec, dataProductSpec as ResourceSpec<unknown>, services, projectId, { externalId });
}

export function createVersions(services: Services, projectId: number, externalId: string, items: readonly VersionCreate[]) {
  return inWrite(services, async (services) => {
    const spec = await versionsOf(services, projectId, externalId);
    await requireViews(services, projectId, items.map((item, i) => ({ views: item.views, path: ['items', i, 'views'] })));
    return createItems(spec, services, projectId, items);
  });
}

export function updateVersions(
  services: Services,
  projectId: number,
  externalId: string,
  items: ReadonlyArray<{ version?: string; update: { views?: { add?: VersionCreate['views'] } } & Record<string, unknown> }>,
) {
  return inWrite(services, async (services) => {
    const spec = await versionsOf(services, projectId, externalId);
    await requireViews(services, projectId, items.map((item, i) => ({ views: item.update.views?.add, path: ['items', i, 'update', 'views', 'add'] })));
    return updateItems(spec as ResourceSpec<unknown>, services, projectId, items);
  });
}
