/**
 * Principals and capabilities. A route declares the capability it needs (in data, next to its schema); the
 * check here decides whether a principal holds it in a project. A principal's grants are the union of the
 * capabilities of its groups in that project; each grant has a scope (`all`, data set ids, item ids, data modeling spaces, or
 * the principal's own groups).
 */
import { forbidden } from '../http/errors.js';
import { aclKey, actionKey, scopeHint } from './acls.js';

export interface Capability {
  acl: string;
  action: string;
  /** Actions of the same ACL that include this one: a grant of any of them satisfies it too. */
  impliedBy?: readonly string[];
}

export type Scope =
  | { all: Record<string, never> }
  | { datasetScope: { ids: number[] } }
  | { idscope: { ids: number[] } }
  /** Extraction pipeline ids, for the items that live under pipelines (their runs and configurations). */
  | { extractionpipelinescope: { ids: number[] } }
  | { spaceIdScope: { spaceIds: string[] } }
  | { currentuserscope: Record<string, never> };

export interface Grant {
  /** ACL name, or `*` for every ACL (the built-in administrator). */
  acl: string;
  /** Actions granted, `*` for all. */
  actions: string[];
  scope: Scope;
  /** Projects the grant applies to, `*` for all. */
  projects: string[] | '*';
}

export type Claims = Readonly<Record<string, unknown>>;

export interface Principal {
  subject: string;
  clientId?: string;
  /** Projects this principal may address at all. */
  projects: string[] | '*';
  grants: Grant[];
  /** Seconds since the epoch when the credential expires. */
  expiresAt?: number;
  /** Ids of the groups the grants come from (in the project the principal was resolved for). */
  groupIds?: number[];
  /** The verified claims of the token (sessions delegate them). */
  claims?: Claims;
  /** The session whose access token authenticated the request, if any. */
  sessionId?: number;
}

export function formatCapability(c: Capability): string {
  return `${c.acl}:${c.action}${c.impliedBy?.length ? ` (or ${c.impliedBy.join(', ')})` : ''}`;
}

function projectMatches(list: string[] | '*', project: string): boolean {
  return list === '*' || list.includes(project);
}

/** The principal's grants on one ACL in a project, whatever their actions. */
export function aclGrants(principal: Principal, aclName: string, project: string): Grant[] {
  const acl = aclKey(aclName);
  return principal.grants.filter((g) => (g.acl === '*' || aclKey(g.acl) === acl) && projectMatches(g.projects, project));
}

export function grantsFor(principal: Principal, capability: Capability, project: string): Grant[] {
  const actions = new Set([capability.action, ...(capability.impliedBy ?? [])].map(actionKey));
  return aclGrants(principal, capability.acl, project).filter((g) => g.actions.includes('*') || g.actions.some((a) => actions.has(actionKey(a))));
}

export function canAccessProject(principal: Principal, project: string): boolean {
  return projectMatches(principal.projects, project);
}

/** Throws 403 naming the capability and the scopes that would satisfy it. Returns the matching grants. */
export function requireCapability(principal: Principal, capability: Capability, project: string): Grant[] {
  const grants = grantsFor(principal, capability, project);
  if (grants.length === 0) {
    throw forbidden(
      `Missing capability ${formatCapability(capability)} (scope: ${scopeHint(capability.acl)}) in project "${project}" for principal "${principal.subject}"`,
    );
  }
  return grants;
}
