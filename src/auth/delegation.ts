/**
 * What a principal may pass on. Whatever grants capabilities (a group, a change of the identity provider
 * that decides who belongs to the groups) may grant only what the principal doing it holds itself: each
 * action of each granted capability must be covered by the principal's own grants of that action.
 *
 * The covering rule compares the granted scope with the union of the principal's scopes for that action:
 * - `all` covers every scope, and only `all` covers `all`;
 * - `datasetScope` and `idscope` cover the same kind of scope listing the same or fewer ids (for
 *   `datasetsAcl`, whose items are data sets, the two kinds name the same ids and cover each other);
 *   data set ids never cover item ids, nor the reverse, since an item can move between data sets;
 * - `currentuserscope` covers `currentuserscope`;
 * - `spaceIdScope` covers `spaceIdScope` listing the same or fewer spaces.
 */
import { forbidden, formatPath } from '../http/errors.js';
import { accessFor, describeScope, type Access } from './access.js';
import { aclKey } from './acls.js';
import { formatCapability, grantsFor, type Capability, type Grant, type Principal } from './principal.js';

/** ACLs whose items are data sets: `idscope` and `datasetScope` list the same ids. */
const DATA_SET_ACLS = new Set([aclKey('datasetsAcl')]);

function idsCovered(wanted: readonly number[], held: ReadonlySet<number>): boolean {
  return wanted.every((id) => held.has(id));
}

/** Whether `held` reaches everything `wanted` reaches, for one action of `acl`. */
export function covers(held: Access, wanted: Access, acl: string): boolean {
  if (held.all) return true;
  if (wanted.all) return false;
  if (wanted.ownGroups && !held.ownGroups) return false;
  if (!wanted.spaces.every((s) => held.spaces.includes(s))) return false;
  if (DATA_SET_ACLS.has(aclKey(acl))) {
    const ids = new Set([...held.dataSetIds, ...held.itemIds]);
    return idsCovered(wanted.dataSetIds, ids) && idsCovered(wanted.itemIds, ids);
  }
  return idsCovered(wanted.dataSetIds, new Set(held.dataSetIds)) && idsCovered(wanted.itemIds, new Set(held.itemIds));
}

function scopeText(access: Access): string {
  return access.all ? 'scope all' : describeScope(access);
}

/**
 * Refuses (403, naming the capability) grants the principal does not hold itself in `project`. `because`
 * ends the message: why this operation needs the principal to hold them.
 */
export function requireHeld(
  principal: Principal,
  project: string,
  wanted: ReadonlyArray<{ grant: Grant; path: Array<string | number> }>,
  because: string,
): void {
  for (const { grant, path } of wanted) {
    for (const action of grant.actions) {
      const capability: Capability = { acl: grant.acl, action };
      const want = accessFor(capability, [grant]);
      const own = grantsFor(principal, capability, project);
      const held = own.length ? accessFor(capability, own) : undefined;
      if (held && covers(held, want, grant.acl)) continue;
      const has = held ? `holds it only in ${scopeText(held)}` : 'does not hold it';
      throw forbidden(
        `${formatPath(path)}: missing capability ${formatCapability(capability)} with ${scopeText(want)}: principal "${principal.subject}" ${has}; ${because}`,
      );
    }
  }
}
