/**
 * Groups: named sets of capabilities, granted to the principals that are members. Creating or deleting
 * groups changes the project's authentication version, so every process re-resolves its principals.
 */
import { parseCapability, type CapabilityObject } from '../../auth/capabilities.js';
import { ALL_USER_ACCOUNTS, deleteGroups, existingGroupIds, insertGroup, projectGroups, type GroupRecord, type NewGroup } from '../../auth/group-store.js';
import { authRuntime } from '../../auth/runtime.js';
import { formatCapability } from '../../auth/principal.js';
import { describeScope } from '../../auth/access.js';
import { badRequest, forbidden, formatPath, missingItems } from '../../http/errors.js';
import { route, type ApiRoute } from '../../http/route.js';
import { inTransaction } from '../../storage/db.js';
import { bumpAuthVersion } from '../../storage/projects.js';
import { CreateGroupsBody, DeleteGroupsBody, GROUP_LIMITS, ListGroupsQuery, type GroupCreate } from './schema.js';

const LIST = { acl: 'groupsAcl', action: 'LIST' };

function groupView(g: GroupRecord) {
  return {
    id: g.id,
    name: g.name,
    ...(g.sourceId !== undefined ? { sourceId: g.sourceId } : {}),
    ...(g.members !== undefined ? { members: g.members } : {}),
    capabilities: g.capabilities,
    ...(g.metadata !== undefined ? { metadata: g.metadata } : {}),
    ...(g.attributes !== undefined ? { attributes: g.attributes } : {}),
    isDeleted: false,
  };
}

function checkMetadata(metadata: Record<string, string> | undefined, path: Array<string | number>): void {
  if (!metadata) return;
  let total = 0;
  for (const [key, value] of Object.entries(metadata)) {
    const keyBytes = Buffer.byteLength(key);
    if (keyBytes > GROUP_LIMITS.metadataKeyBytes) throw badRequest(`${formatPath([...path, key])}: keys are at most ${GROUP_LIMITS.metadataKeyBytes} bytes`);
    total += keyBytes + Buffer.byteLength(value);
  }
  if (total > GROUP_LIMITS.metadataBytes) throw badRequest(`${formatPath(path)}: keys and values are at most ${GROUP_LIMITS.metadataBytes} bytes together, got ${total}`);
}

export const groupRoutes: ApiRoute[] = [
  route({
    method: 'GET',
    path: '/groups',
    capability: LIST,
    query: ListGroupsQuery,
    handler: ({ services, project, principal, query }) => {
      const access = services.access;
      if (query.all && access !== undefined && !access.all) {
        throw forbidden(`Listing every group (all=true) needs ${formatCapability(LIST)} with scope all; this principal has it only in ${describeScope(access)}`);
      }
      const groups = projectGroups(services.db, project.id);
      const own = new Set(principal.groupIds ?? []);
      return { items: groups.filter((g) => query.all || own.has(g.id)).map(groupView) };
    },
  }),
  route({
    method: 'POST',
    path: '/groups',
    capability: { acl: 'groupsAcl', action: 'CREATE' },
    body: CreateGroupsBody,
    status: 201,
    handler: ({ services, project, body }) => {
      const registry = authRuntime(services).acls;
      const groups: NewGroup[] = body.items.map((item: GroupCreate, i) => {
        const path = ['items', i];
        if (item.sourceId !== undefined && item.members !== undefined) {
          throw badRequest(`${formatPath(path)}: give either sourceId (membership kept by the identity provider) or members (kept here), not both`);
        }
        checkMetadata(item.metadata, [...path, 'metadata']);
        const capabilities: CapabilityObject[] = (item.capabilities ?? []).map(
          (c, j) => parseCapability(c, [...path, 'capabilities', j], registry, project.name).capability,
        );
        return {
          name: item.name,
          ...(item.sourceId !== undefined ? { sourceId: item.sourceId } : {}),
          ...(item.members !== undefined ? { members: item.members === ALL_USER_ACCOUNTS ? ALL_USER_ACCOUNTS : [...new Set(item.members)] } : {}),
          capabilities,
          ...(item.metadata !== undefined ? { metadata: item.metadata } : {}),
          ...(item.attributes !== undefined ? { attributes: item.attributes } : {}),
        };
      });
      const { db } = services;
      const ids = inTransaction(db, () => {
        const created = groups.map((g) => insertGroup(db, project.id, g, services.now()));
        bumpAuthVersion(db, project.id);
        return new Set(created);
      });
      return { items: projectGroups(db, project.id).filter((g) => ids.has(g.id)).map(groupView) };
    },
  }),
  route({
    method: 'POST',
    path: '/groups/delete',
    capability: { acl: 'groupsAcl', action: 'DELETE' },
    body: DeleteGroupsBody,
    handler: ({ services, project, body }) => {
      const { db } = services;
      inTransaction(db, () => {
        const existing = existingGroupIds(db, project.id, body.items);
        const missing = body.items.filter((id) => !existing.has(id));
        if (missing.length) throw missingItems(missing.map((id) => ({ id })));
        deleteGroups(db, project.id, body.items);
        bumpAuthVersion(db, project.id);
      });
      return {};
    },
  }),
];
