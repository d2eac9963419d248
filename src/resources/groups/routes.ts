/**
 * Groups: named sets of capabilities, granted to the principals that are members. Creating or deleting
 * groups changes the project's authentication version, so every process re-resolves its principals.
 *
 * Managing groups never widens the manager's own access: a group grants only capabilities its creator holds
 * (auth/delegation.ts), and with `currentuserscope` a principal creates and deletes only groups it is (or
 * would be) a member of.
 */
import { describeScope, type Access } from '../../auth/access.js';
import { parseCapability, type CapabilityObject } from '../../auth/capabilities.js';
import { requireHeld } from '../../auth/delegation.js';
import { ALL_USER_ACCOUNTS, deleteGroups, existingGroupIds, insertGroup, projectGroups, type GroupRecord, type NewGroup } from '../../auth/group-store.js';
import { memberGroups } from '../../auth/membership.js';
import { authRuntime } from '../../auth/runtime.js';
import { formatCapability, type Capability, type Grant, type Principal } from '../../auth/principal.js';
import { badRequest, forbidden, formatPath, missingItems } from '../../http/errors.js';
import { route, type ApiRoute } from '../../http/route.js';

import { bumpAuthVersion, findProjectAuth } from '../../storage/projects.js';
import { CreateGroupsBody, DeleteGroupsBody, GROUP_LIMITS, ListGroupsQuery, type GroupCreate } from './schema.js';

const LIST = { acl: 'groupsAcl', action: 'LIST' };
const CREATE = { acl: 'groupsAcl', action: 'CREATE' };
const DELETE = { acl: 'groupsAcl', action: 'DELETE' };

const NOT_HELD = 'a group grants only capabilities its creator holds itself';

/** The refusal of a principal whose `capability` reaches only its own groups, for a group outside them. */
function notOwnGroup(path: Array<string | number>, capability: Capability, access: Access & { all: false }, what: string): never {
  throw forbidden(
    `${formatPath(path)}: ${formatCapability(capability)} is granted only in ${describeScope(access)}, and ${what}; ` +
      `this needs ${formatCapability(capability)} with scope all`,
  );
}

/** Whether the principal would be a member of the group, by the same rule that decides membership. */
function wouldBeMember(g: NewGroup, principal: Principal, accessClaims: readonly string[]): boolean {
  const appIds = g.attributes?.token?.appIds;
  const candidate = { id: 0, sourceId: g.sourceId, members: g.members, ...(appIds ? { appIds: new Set(appIds) } : {}), grants: [] };
  return memberGroups([candidate], principal.claims ?? {}, accessClaims).length === 1;
}

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
    handler: async ({ services, project, principal, query }) => {
      const access = services.access;
      if (query.all && access !== undefined && !access.all) {
        throw forbidden(`Listing every group (all=true) needs ${formatCapability(LIST)} with scope all; this principal has it only in ${describeScope(access)}`);
      }
      const groups = await projectGroups(services.db, project.id);
      const own = new Set(principal.groupIds ?? []);
      return { items: groups.filter((g) => query.all || own.has(g.id)).map(groupView) };
    },
  }),
  route({
    method: 'POST',
    path: '/groups',
    capability: CREATE,
    body: CreateGroupsBody,
    status: 201,
    handler: async ({ services, project, principal, body }) => {
      const auth = authRuntime(services);
      const registry = auth.acls;
      const granted: Array<{ grant: Grant; path: Array<string | number> }> = [];
      const groups: NewGroup[] = body.items.map((item: GroupCreate, i) => {
        const path = ['items', i];
        if (item.sourceId !== undefined && item.members !== undefined) {
          throw badRequest(`${formatPath(path)}: give either sourceId (membership kept by the identity provider) or members (kept here), not both`);
        }
        checkMetadata(item.metadata, [...path, 'metadata']);
        const capabilities: CapabilityObject[] = (item.capabilities ?? []).map((c, j) => {
          const parsed = parseCapability(c, [...path, 'capabilities', j], registry, project.name);
          granted.push({ grant: parsed.grant, path: [...path, 'capabilities', j] });
          return parsed.capability;
        });
        return {
          name: item.name,
          ...(item.sourceId !== undefined ? { sourceId: item.sourceId } : {}),
          ...(item.members !== undefined ? { members: item.members === ALL_USER_ACCOUNTS ? ALL_USER_ACCOUNTS : [...new Set(item.members)] } : {}),
          capabilities,
          ...(item.metadata !== undefined ? { metadata: item.metadata } : {}),
          ...(item.attributes !== undefined ? { attributes: item.attributes } : {}),
        };
      });
      const access = services.access;
      if (access !== undefined && !access.all) {
        const accessClaims = (await auth.provider((await findProjectAuth(services.db, project.name))!)).accessClaims;
        groups.forEach((g, i) => {
          if (!wouldBeMember(g, principal, accessClaims)) {
            notOwnGroup(['items', i], CREATE, access, `principal "${principal.subject}" would not be a member of this group (by its sourceId, members or appIds)`);
          }
        });
      }
      requireHeld(principal, project.name, granted, NOT_HELD);
      const { db } = services;
      const ids = await db.transaction(async (db) => {
        const created: number[] = [];
        for (const g of groups) created.push(await insertGroup(db, project.id, g, services.now()));
        await bumpAuthVersion(db, project.id);
        return new Set(created);
      });
      return { items: (await projectGroups(db, project.id)).filter((g) => ids.has(g.id)).map(groupView) };
    },
  }),
  route({
    method: 'POST',
    path: '/groups/delete',
    capability: DELETE,
    body: DeleteGroupsBody,
    handler: async ({ services, project, principal, body }) => {
      const { db, access } = services;
      if (access !== undefined && !access.all) {
        // Checked before existence, so that the answer is the same for another's group and a missing one.
        const own = new Set(principal.groupIds ?? []);
        body.items.forEach((id, i) => {
          if (!own.has(id)) notOwnGroup(['items', i], DELETE, access, `group ${id} is not one of the groups of principal "${principal.subject}"`);
        });
      }
      await db.transaction(async (db) => {
        const existing = await existingGroupIds(db, project.id, body.items);
        const missing = body.items.filter((id) => !existing.has(id));
        if (missing.length) throw missingItems(missing.map((id) => ({ id })));
        await deleteGroups(db, project.id, body.items);
        await bumpAuthVersion(db, project.id);
      });
      return {};
    },
  }),
];
