/**
 * Principals and capabilities. A route declares the capability it needs (in data, next to its schema); the
 * check here decides whether a principal holds it in a project. Grants have a scope: `all`, or a list of
 * data set ids. Issue #4 fills principals from groups; the check itself stays here.
 */
import { forbidden } from '../http/errors.js';

export interface Capability {
  acl: string;
  action: string;
}

export type Scope = { all: Record<string, never> } | { datasetScope: { ids: number[] } };

export interface Grant {
  /** ACL name, or `*` for every ACL (the built-in administrator). */
  acl: string;
  /** Actions granted, `*` for all. */
  actions: string[];
  scope: Scope;
  /** Projects the grant applies to, `*` for all. */
  projects: string[] | '*';
}

export interface Principal {
  subject: string;
  clientId?: string;
  /** Projects this principal may address at all. */
  projects: string[] | '*';
  grants: Grant[];
  /** Seconds since the epoch when the credential expires. */
  expiresAt?: number;
}

export function formatCapability(c: Capability): string {
  return `${c.acl}:${c.action}`;
}

function projectMatches(list: string[] | '*', project: string): boolean {
  return list === '*' || list.includes(project);
}

export function grantsFor(principal: Principal, capability: Capability, project: string): Grant[] {
  return principal.grants.filter(
    (g) =>
      (g.acl === '*' || g.acl === capability.acl) &&
      (g.actions.includes('*') || g.actions.includes(capability.action)) &&
      projectMatches(g.projects, project),
  );
}

export function canAccessProject(principal: Principal, project: string): boolean {
  return projectMatches(principal.projects, project);
}

/** Throws 403 naming the capability when the principal holds it in no scope. Returns the matching grants. */
export function requireCapability(principal: Principal, capability: Capability, project: string): Grant[] {
  const grants = grantsFor(principal, capability, project);
  if (grants.length === 0) {
    throw forbidden(
      `Missing capability ${formatCapability(capability)} (scope: all, or a data set scope) in project "${project}" for principal "${principal.subject}"`,
    );
  }
  return grants;
}
