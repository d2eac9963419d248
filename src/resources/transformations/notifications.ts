/**
 * Notification addresses of transformations: each names a transformation the request sees (by id or
 * external id). Strata sends no mail; the addresses are kept and listed for the clients that manage them.
 */
import { badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { and, equalsLeaf } from '../../query/basic.js';
import { createItems, deleteItems, fromModel, getItem, listItems, type ResourceSpec } from '../crud.js';
import { notificationModel } from './model.js';
import type { NotificationCreate } from './schema.js';
import { ofSeenTransformations, transformationSpec, withoutHiddenItems, withoutOthersPrivate } from './service.js';
import type { Principal } from '../../auth/principal.js';

const spec = fromModel(notificationModel) as ResourceSpec<unknown>;

async function transformationOf(services: Services, principal: Principal, projectId: number, ref: { id?: number; externalId?: string }, path: (string | number)[]) {
  try {
    await withoutOthersPrivate(services, principal, projectId, [ref]);
    return await getItem(transformationSpec as ResourceSpec<unknown>, services, projectId, (ref.id !== undefined ? { id: ref.id } : { externalId: ref.externalId }) as { id: number });
  } catch {
    throw badRequest(`${formatPath(path)}: the transformation ${JSON.stringify(ref)} does not exist`);
  }
}

export async function createNotifications(services: Services, principal: Principal, projectId: number, items: readonly NotificationCreate[]) {
  const values = [];
  for (const [i, item] of items.entries()) {
    const ref = 'transformationId' in item ? { id: item.transformationId } : { externalId: item.transformationExternalId };
    const tf = await transformationOf(services, principal, projectId, ref, ['items', i]);
    values.push({ transformationId: tf.id, destination: item.destination });
  }
  return createItems(spec, services, projectId, values);
}

export async function listNotifications(services: Services, principal: Principal, projectId: number, q: { transformationId?: number; transformationExternalId?: string; destination?: string; limit?: number; cursor?: string }) {
  const id = q.transformationExternalId !== undefined ? (await transformationOf(services, principal, projectId, { externalId: q.transformationExternalId }, ['transformationExternalId'])).id : q.transformationId;
  const catalog = notificationModel.catalog;
  return listItems(spec, services, projectId, { filter: q, limit: q.limit, cursor: q.cursor }, and([equalsLeaf(catalog, 'transformationId', id), equalsLeaf(catalog, 'destination', q.destination), await ofSeenTransformations(services, principal, projectId, catalog)]));
}

export async function deleteNotifications(services: Services, principal: Principal, projectId: number, items: ReadonlyArray<{ id: number }>) {
  return deleteItems(spec, services, projectId, await withoutHiddenItems(services, principal, projectId, 'transformation_notifications', items), false);
}
