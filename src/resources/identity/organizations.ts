/**
 * Organizations: the root one (the server's setting) and the child organizations stored under it, the
 * projects each holds (the `organization` member of a project's stored configuration; the root one when
 * absent), and who administers them. Every organization's members are the principals of Strata's built-in
 * identity provider; a principal administers an organization when it is the built-in administrator or its
 * `groups` claim holds the admin group of that organization or of one of its ancestors.
 */
import type { JWTPayload } from 'jose';
import { DEV_CLIENT_ID, GROUPS_CLAIM } from '../../auth/idp.js';
import { forbidden, notFound } from '../../http/errors.js';
import { readProjectConfig } from '../../storage/projects.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import type { IdentitySettings } from './settings.js';

export interface Organization {
  id: string;
  parentId?: string;
  adminGroupId?: string;
  adminsCanCreateOrgsInSubtree: boolean;
  adminsCanCreateProjectsInSubtree: boolean;
  allowedClusters: string[];
  idp: Record<string, unknown>;
}

interface OrgRow {
  id: string;
  parent_id: string;
  admin_group_id: string | null;
  orgs_in_subtree: number;
  projects_in_subtree: number;
  allowed_clusters: string;
  idp: string;
}

/** Parts of an identity provider's configuration that are written and never read back. */
const WRITE_ONLY = new Set(['clientSecret', 'appKey']);

function fromRow(r: OrgRow): Organization {
  return {
    id: r.id,
    parentId: r.parent_id,
    ...(r.admin_group_id !== null ? { adminGroupId: r.admin_group_id } : {}),
    adminsCanCreateOrgsInSubtree: Number(r.orgs_in_subtree) === 1,
    adminsCanCreateProjectsInSubtree: Number(r.projects_in_subtree) === 1,
    allowedClusters: JSON.parse(r.allowed_clusters) as string[],
    idp: JSON.parse(r.idp) as Record<string, unknown>,
  };
}

/** An organization as the API shows it. */
export function orgView(o: Organization) {
  return {
    id: o.id,
    parentId: o.parentId ?? null,
    adminGroupId: o.adminGroupId ?? null,
    adminsCanCreateOrgsInSubtree: o.adminsCanCreateOrgsInSubtree,
    adminsCanCreateProjectsInSubtree: o.adminsCanCreateProjectsInSubtree,
    allowedClusters: o.allowedClusters,
    idp: Object.fromEntries(Object.entries(o.idp).filter(([k]) => !WRITE_ONLY.has(k))),
  };
}

export class Organizations {
  constructor(
    private readonly settings: IdentitySettings,
    /** The issuer of the built-in identity provider: the root organization's identity provider. */
    private readonly issuer: string,
  ) {}

  get rootId(): string {
    return this.settings.organization;
  }

  root(): Organization {
    return {
      id: this.settings.organization,
      ...(this.settings.adminGroup !== undefined ? { adminGroupId: this.settings.adminGroup } : {}),
      adminsCanCreateOrgsInSubtree: true,
      adminsCanCreateProjectsInSubtree: true,
      allowedClusters: [this.settings.cluster],
      idp: { issuer: this.issuer },
    };
  }

  async find(db: Queryable, id: string): Promise<Organization | undefined> {
    if (id === this.rootId) return this.root();
    const row = await db.get<OrgRow>(sql`SELECT * FROM organizations WHERE id = ${id}`);
    return row && fromRow(row);
  }

  async children(db: Queryable, id: string): Promise<Organization[]> {
    return (await db.all<OrgRow>(sql`SELECT * FROM organizations WHERE parent_id = ${id} ORDER BY id`)).map(fromRow);
  }

  /** The organization and its ancestors, nearest first; undefined when it does not exist. */
  async chain(db: Queryable, id: string): Promise<Organization[] | undefined> {
    const out: Organization[] = [];
    let next: string | undefined = id;
    while (next !== undefined) {
      const org = await this.find(db, next);
      if (!org) return undefined;
      out.push(org);
      next = org.parentId;
    }
    return out;
  }

  /** The names of the projects in an organization. */
  async projects(db: Queryable, id: string): Promise<string[]> {
    const out: string[] = [];
    for (const p of await db.all<{ id: number; name: string }>(sql`SELECT id, name FROM projects ORDER BY name`)) {
      const org = (await readProjectConfig(db, Number(p.id))).organization;
      if ((typeof org === 'string' ? org : this.rootId) === id) out.push(p.name);
    }
    return out;
  }
}

/** Whether the claims' principal administers one of the organizations. */
export function administers(claims: JWTPayload, orgs: readonly Organization[]): boolean {
  if (claims.sub === DEV_CLIENT_ID) return true;
  const groups = claims[GROUPS_CLAIM];
  const held = new Set(Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : []);
  return orgs.some((o) => o.adminGroupId !== undefined && held.has(o.adminGroupId));
}

/**
 * The organization and its ancestors when the principal administers one of them (`exact`: the organization
 * itself). A principal that administers the root organization is told when an organization does not exist;
 * any other is refused alike for an organization it may not see and for one that does not exist.
 */
export async function requireAdmin(db: Queryable, orgs: Organizations, claims: JWTPayload, id: string, exact = false): Promise<Organization[]> {
  const chain = await orgs.chain(db, id);
  if (chain && administers(claims, exact ? chain.slice(0, 1) : chain)) return chain;
  if (!chain && administers(claims, [orgs.root()])) throw notFound(`Organization "${id}" does not exist`);
  throw forbidden(`Principal "${String(claims.sub)}" is not an admin of organization "${id}"${exact ? '' : ' or of an organization above it'}`);
}
