/**
 * Capabilities as groups state them (`{"eventsAcl": {"actions": ["READ"], "scope": {"datasetScope": {"ids": [1]}}}}`),
 * checked against the ACL registry and turned into grants. An unknown ACL, action or scope is a 400 that
 * names it; a scope the reference knows but Strata does not enforce is refused too, rather than granting
 * more or less than it says.
 */
import { badRequest, formatPath } from '../http/errors.js';
import { MAX_SAFE_ID } from '../http/common-schemas.js';
import { SUPPORTED_SCOPES, actionKey, type AclRegistry } from './acls.js';
import type { Grant, Scope } from './principal.js';
import { isObject } from '../http/validation.js';

type Path = Array<string | number>;

/** The API form of one capability, normalized (canonical ACL name, upper-case actions). */
export type CapabilityObject = Record<string, unknown>;

const MAX_SCOPE_IDS = 10_000;

function fail(path: Path, message: string): never {
  throw badRequest(`${formatPath(path)}: ${message}`);
}

function emptyObject(v: unknown, path: Path): Record<string, never> {
  if (!isObject(v) || Object.keys(v).length) fail(path, 'expected an empty object {}');
  return {};
}

function idList(v: unknown, path: Path): number[] {
  if (!isObject(v) || Object.keys(v).some((k) => k !== 'ids')) fail(path, 'expected {"ids": [<id>, ...]}');
  const ids = (v as { ids?: unknown }).ids;
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > MAX_SCOPE_IDS) fail([...path, 'ids'], `expected an array of 1 to ${MAX_SCOPE_IDS} ids`);
  (ids as unknown[]).forEach((id, i) => {
    if (!Number.isInteger(id) || (id as number) < 1 || (id as number) > MAX_SAFE_ID) fail([...path, 'ids', i], `expected an id from 1 to ${MAX_SAFE_ID}`);
  });
  return [...new Set(ids as number[])];
}

const SPACE = /^[a-zA-Z][a-zA-Z0-9_-]{0,41}[a-zA-Z0-9]?$/;

function spaceList(v: unknown, path: Path): string[] {
  if (!isObject(v) || Object.keys(v).some((k) => k !== 'spaceIds')) fail(path, 'expected {"spaceIds": ["<space>", ...]}');
  const spaces = (v as { spaceIds?: unknown }).spaceIds;
  if (!Array.isArray(spaces) || spaces.length < 1 || spaces.length > MAX_SCOPE_IDS) fail([...path, 'spaceIds'], `expected an array of 1 to ${MAX_SCOPE_IDS} spaces`);
  (spaces as unknown[]).forEach((s, i) => {
    if (typeof s !== 'string' || !SPACE.test(s)) fail([...path, 'spaceIds', i], 'expected a space identifier');
  });
  return [...new Set(spaces as string[])];
}

function parseScope(raw: unknown, acl: string, known: ReadonlySet<string>, path: Path): Scope {
  if (!isObject(raw) || Object.keys(raw).length !== 1) fail(path, `expected an object with exactly one scope (${[...known].join(', ')})`);
  const [name] = Object.keys(raw);
  const value = raw[name];
  const at = [...path, name];
  if (!known.has(name)) fail(path, `unknown scope "${name}" for ${acl}; its scopes are ${[...known].join(', ')}`);
  if (!(SUPPORTED_SCOPES as readonly string[]).includes(name)) {
    const usable = [...known].filter((s) => (SUPPORTED_SCOPES as readonly string[]).includes(s));
    fail(path, `scope "${name}" of ${acl} is not supported by this server; use ${usable.join(' or ')}`);
  }
  switch (name) {
    case 'all':
      return { all: emptyObject(value, at) };
    case 'datasetScope':
      return { datasetScope: { ids: idList(value, at) } };
    case 'idscope':
      return { idscope: { ids: idList(value, at) } };
    case 'extractionpipelinescope':
      return { extractionpipelinescope: { ids: idList(value, at) } };
    case 'spaceIdScope':
      return { spaceIdScope: { spaceIds: spaceList(value, at) } };
    default:
      return { currentuserscope: emptyObject(value, at) };
  }
}

/** Checks one capability of a group in `project`; returns its normalized form and the grant it gives. */
export function parseCapability(raw: unknown, path: Path, registry: AclRegistry, project: string): { capability: CapabilityObject; grant: Grant } {
  if (!isObject(raw)) fail(path, 'expected an object such as {"eventsAcl": {"actions": ["READ"], "scope": {"all": {}}}}');
  const { projectUrlNames, ...acls } = raw;
  const names = Object.keys(acls);
  if (names.length !== 1) fail(path, `expected exactly one ACL (such as "eventsAcl"), got ${names.length ? names.map((n) => `"${n}"`).join(', ') : 'none'}`);
  const given = names[0];
  const def = registry.find(given);
  if (!def) fail(path, `unknown capability "${given}"; known capabilities: ${registry.names().join(', ')}`);
  const at = [...path, given];
  const body = acls[given];
  if (!isObject(body)) fail(at, 'expected {"actions": [...], "scope": {...}}');
  const extra = Object.keys(body).filter((k) => k !== 'actions' && k !== 'scope');
  if (extra.length) fail(at, `unknown property "${extra[0]}" (allowed: actions, scope)`);
  const { actions, scope } = body as { actions?: unknown; scope?: unknown };
  if (!Array.isArray(actions) || actions.length === 0) fail([...at, 'actions'], `expected a non-empty array of actions (${[...def.actions].join(', ')})`);
  const normalized = (actions as unknown[]).map((a, i) => {
    if (typeof a !== 'string' || !def.actions.has(actionKey(a))) {
      fail([...at, 'actions', i], `unknown action ${JSON.stringify(a)} for ${def.name}; its actions are ${[...def.actions].join(', ')}`);
    }
    return actionKey(a as string);
  });
  if (scope === undefined) fail([...at, 'scope'], `is required (${[...def.scopes].join(', ')})`);
  const parsedScope = parseScope(scope, def.name, def.scopes, [...at, 'scope']);
  if (projectUrlNames !== undefined) {
    const urlNames = isObject(projectUrlNames) ? projectUrlNames.urlNames : undefined;
    if (!Array.isArray(urlNames) || !urlNames.every((n) => typeof n === 'string')) fail([...path, 'projectUrlNames'], 'expected {"urlNames": ["<project>", ...]}');
    if (!(urlNames as string[]).includes(project)) {
      fail([...path, 'projectUrlNames'], `a group grants capabilities only in its own project "${project}"; list it in urlNames or leave projectUrlNames out`);
    }
  }
  const actionList = [...new Set(normalized)];
  return {
    capability: { [def.name]: { actions: actionList, scope: parsedScope }, ...(projectUrlNames !== undefined ? { projectUrlNames } : {}) },
    grant: { acl: def.name, actions: actionList, scope: parsedScope, projects: [project] },
  };
}
