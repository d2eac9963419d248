/**
 * Which of a project's groups a token's principal belongs to, and what they grant. A group applies when
 * one of the token's access claims (for example `groups`) holds its `sourceId`, or its `members` list the
 * token's subject (or is `allUserAccounts`); `attributes.token.appIds` narrows it to tokens of those
 * applications.
 */
import type { AclRegistry } from './acls.js';
import { parseCapability } from './capabilities.js';
import { ALL_USER_ACCOUNTS, type GroupRecord } from './group-store.js';
import type { Claims, Grant } from './principal.js';

export interface ResolvedGroup {
  id: number;
  sourceId?: string;
  members?: GroupRecord['members'];
  appIds?: ReadonlySet<string>;
  grants: Grant[];
}

/** Groups with their capabilities turned into grants; a stored capability that no longer parses grants nothing. */
export function resolveGroups(records: readonly GroupRecord[], registry: AclRegistry, project: string): ResolvedGroup[] {
  return records.map((g) => {
    const grants: Grant[] = [];
    for (const c of g.capabilities) {
      try {
        grants.push(parseCapability(c, ['capabilities'], registry, project).grant);
      } catch {
        continue;
      }
    }
    const appIds = g.attributes?.token?.appIds;
    return {
      id: g.id,
      ...(g.sourceId !== undefined ? { sourceId: g.sourceId } : {}),
      ...(g.members !== undefined ? { members: g.members } : {}),
      ...(appIds !== undefined ? { appIds: new Set(appIds) } : {}),
      grants,
    };
  });
}

/** String values of the named claims (a claim may hold one string or an array of them). */
export function claimValues(claims: Claims, names: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const name of names) {
    const v = claims[name];
    if (typeof v === 'string') out.add(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') out.add(x);
  }
  return out;
}

/** The application a token was issued to, under the names providers use for it. */
export function appIdOf(claims: Claims): string | undefined {
  for (const name of ['azp', 'appid', 'client_id']) {
    const v = claims[name];
    if (typeof v === 'string') return v;
  }
  return undefined;
}

export function memberGroups(groups: readonly ResolvedGroup[], claims: Claims, accessClaims: readonly string[]): ResolvedGroup[] {
  const sourceIds = claimValues(claims, accessClaims);
  const subject = typeof claims.sub === 'string' ? claims.sub : undefined;
  const appId = appIdOf(claims);
  return groups.filter((g) => {
    const member =
      (g.sourceId !== undefined && sourceIds.has(g.sourceId)) ||
      g.members === ALL_USER_ACCOUNTS ||
      (Array.isArray(g.members) && subject !== undefined && g.members.includes(subject));
    return member && (g.appIds === undefined || (appId !== undefined && g.appIds.has(appId)));
  });
}
