/**
 * The capabilities a group can grant: every ACL the public reference names (with its actions and scopes),
 * plus whatever a declared route requires, so that every route's capability can always be granted. ACL
 * names are compared without case and without a trailing "Acl" (the reference spells `DataModelsAcl`,
 * `dataModelsAcl` and `datamodels` for the same ACL).
 */
import type { Capability } from './principal.js';

/** Scopes Strata enforces. Other scopes of the reference are known but refused when a group is created. */
export const SUPPORTED_SCOPES = ['all', 'datasetScope', 'idscope', 'currentuserscope', 'spaceIdScope', 'extractionpipelinescope'] as const;

export interface AclDef {
  /** The spelling shown in messages and in token inspection. */
  name: string;
  actions: ReadonlySet<string>;
  scopes: ReadonlySet<string>;
}

const A = 'all';
const DS = 'datasetScope';
const RW = ['READ', 'WRITE'];

/** ACLs of the reference: the group capability schema, the capability schema and the operations' `x-capability`. */
const REFERENCE: ReadonlyArray<[string, string[], string[]]> = [
  ['agentsAcl', ['READ', 'WRITE', 'RUN'], [A]],
  ['analyticsAcl', ['READ', 'EXECUTE', 'LIST'], [A]],
  ['annotationsAcl', ['READ', 'WRITE', 'SUGGEST', 'REVIEW'], [A]],
  ['assetsAcl', RW, [A, DS]],
  ['dataModelInstancesAcl', ['READ', 'WRITE', 'WRITE_PROPERTIES'], [A, 'spaceIdScope']],
  ['dataModelsAcl', RW, [A, 'spaceIdScope']],
  // Data sets are scoped by their own ids; `datasetScope` is accepted as the same thing.
  ['datasetsAcl', ['READ', 'WRITE', 'OWNER'], [A, 'idscope', DS]],
  ['diagramParsingAcl', RW, [A]],
  ['digitalTwinAcl', ['READ', 'WRITE', 'WRITE_PROPERTIES'], [A, 'spaceIdScope']],
  ['entityMatchingAcl', RW, [A]],
  ['eventsAcl', RW, [A, DS]],
  ['experimentAcl', ['USE'], [A]],
  ['extractionConfigsAcl', RW, [A, 'extractionpipelinescope', DS]],
  ['extractionPipelinesAcl', RW, [A, 'idscope', DS]],
  ['extractionRunsAcl', RW, [A, 'extractionpipelinescope', DS]],
  ['filesAcl', RW, [A, DS]],
  ['functionsAcl', ['READ', 'WRITE', 'RUN'], [A]],
  ['geospatialAcl', RW, [A]],
  ['geospatialCrsAcl', RW, [A]],
  ['groupsAcl', ['LIST', 'READ', 'CREATE', 'UPDATE', 'DELETE'], [A, 'currentuserscope']],
  ['hostedExtractorsAcl', RW, [A]],
  ['ilaInstancesAcl', RW, [A, 'spaceIdScope']],
  ['integrationConfigsAcl', RW, [A]],
  ['integrationsAcl', ['READ', 'WRITE', 'USE'], [A]],
  ['labelsAcl', RW, [A, DS]],
  ['limitsAcl', RW, [A]],
  ['locationFiltersAcl', RW, [A, 'idScope']],
  ['postgresGatewayAcl', RW, [A]],
  ['projectsAcl', ['LIST', 'READ', 'CREATE', 'UPDATE'], [A]],
  ['rawAcl', ['READ', 'WRITE', 'LIST'], [A, 'tableScope']],
  ['relationshipsAcl', RW, [A, DS]],
  ['sapWritebackAcl', RW, [A]],
  ['sapWritebackRequestsAcl', ['LIST', 'WRITE'], [A]],
  ['securityCategoriesAcl', ['MEMBEROF', 'LIST', 'CREATE', 'DELETE', 'UPDATE'], [A, 'idscope']],
  ['seismicAcl', RW, [A]],
  ['sequencesAcl', RW, [A, DS]],
  ['sessionsAcl', ['LIST', 'CREATE', 'DELETE'], [A]],
  ['simulatorsAcl', ['READ', 'WRITE', 'DELETE', 'RUN', 'MANAGE'], [A, DS]],
  ['streamRecordsAcl', RW, [A, 'spaceIdScope']],
  ['streamsAcl', ['CREATE', 'DELETE', 'READ'], [A]],
  ['subscribeSignalsAcl', RW, [A]],
  ['threedAcl', ['READ', 'CREATE', 'UPDATE', 'DELETE'], [A, DS]],
  ['timeSeriesAcl', RW, [A, 'idscope', 'assetRootIdScope', DS]],
  ['timeSeriesSubscriptionsAcl', RW, [A, DS]],
  ['transformationsAcl', RW, [A, DS]],
  ['typesAcl', RW, [A]],
  ['userProfilesAcl', ['READ'], [A]],
  ['workflowOrchestrationAcl', RW, [A, DS]],
];

/** The comparison key of an ACL name: `DataModelsAcl`, `dataModelsAcl` and `datamodels` are one ACL. */
export function aclKey(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('acl') ? lower.slice(0, -3) : lower;
}

export function actionKey(action: string): string {
  return action.toUpperCase();
}

export interface AclRegistry {
  find(name: string): AclDef | undefined;
  names(): string[];
  all(): AclDef[];
}

/** The reference's ACLs plus every capability the given routes require. */
export function createAclRegistry(required: Iterable<Capability>): AclRegistry {
  const byKey = new Map<string, { name: string; actions: Set<string>; scopes: Set<string> }>();
  for (const [name, actions, scopes] of REFERENCE) byKey.set(aclKey(name), { name, actions: new Set(actions), scopes: new Set(scopes) });
  for (const c of required) {
    const key = aclKey(c.acl);
    const def = byKey.get(key) ?? { name: c.acl, actions: new Set<string>(), scopes: new Set([A]) };
    def.actions.add(actionKey(c.action));
    byKey.set(key, def);
  }
  const defs = [...byKey.values()].sort((a, b) => a.name.localeCompare(b.name));
  return {
    find: (name) => byKey.get(aclKey(name)),
    names: () => defs.map((d) => d.name),
    all: () => defs,
  };
}

const referenceScopes = new Map(REFERENCE.map(([name, , scopes]) => [aclKey(name), scopes.filter((s) => (SUPPORTED_SCOPES as readonly string[]).includes(s))]));

/** The scopes that can satisfy a capability, for messages: `all or datasetScope`. */
export function scopeHint(acl: string): string {
  const scopes = referenceScopes.get(aclKey(acl)) ?? [A];
  return scopes.join(' or ');
}
