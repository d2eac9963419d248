/**
 * The system data models: the core data model every project has (spaces `cdf_cdm`, `cdf_cdm_3d` and
 * `cdf_cdm_units`, their containers and views, and the data model `CogniteCore` v1), declared in
 * `catalog/cdm/core-model.yaml`, and the other system models real projects hold, each in its file beside it
 * (`SYSTEM_MODEL_FILES`), all in the shapes of the apply requests. Seeding the global layer that every project
 * reads (global-layer.ts) is applying what `coreModelRequests(systemModels())` returns, in its order. They are
 * the system's: users are not to change any of it (spaces starting with `cdf_` are not theirs), but their
 * views can implement its views and their instances can be written through them.
 *
 * The catalog is read and checked against the request schemas once, at the first call; a catalog that does
 * not hold together (a shape the requests refuse, a reference to a container or view it does not declare, a
 * cycle among its dependencies) throws, naming the file and the place. What it returns is frozen.
 */
import { readFileSync } from 'node:fs';
import { Type, type TSchema } from '@sinclair/typebox';
import { parse } from 'yaml';
import { ApiError } from '../../http/errors.js';
import { compileBodyValidator } from '../../http/validation.js';
import { ContainerCreate, type ApplyContainersBody } from './container-schema.js';
import { DataModelCreate, type ApplyDataModelsBody } from './data-model-schema.js';
import { containerKey, viewKey, type ViewId } from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { SpaceCreate, type ApplySpacesBody } from './space-schema.js';
import { ViewCreate, type ApplyViewsBody } from './view-schema.js';

/** The same relative path from src/resources/models and from the compiled dist/resources/models. */
export const CORE_MODEL_FILE = new URL('../../../catalog/cdm/core-model.yaml', import.meta.url);

/** The other system data models real projects hold, each in its file beside the core model's (see catalog/cdm/README.md). */
export const SYSTEM_MODEL_FILES: readonly URL[] = ['cdf-core.yaml', 'extraction-extensions.yaml'].map(
  (name) => new URL(`../../../catalog/cdm/${name}`, import.meta.url),
);

export const CORE_MODEL_ID: Readonly<ViewId> = Object.freeze({ space: 'cdf_cdm', externalId: 'CogniteCore', version: 'v1' });

/** The declaration, each list in dependency order: what an item names comes before it. */
export interface CoreModel {
  readonly spaces: readonly SpaceCreate[];
  readonly containers: readonly ContainerCreate[];
  readonly views: readonly ViewCreate[];
  readonly dataModels: readonly DataModelCreate[];
}

/** One apply request of the seeding, with the operation it goes to. */
export type CoreModelRequest =
  | { readonly kind: 'spaces'; readonly body: ApplySpacesBody }
  | { readonly kind: 'containers'; readonly body: ApplyContainersBody }
  | { readonly kind: 'views'; readonly body: ApplyViewsBody }
  | { readonly kind: 'dataModels'; readonly body: ApplyDataModelsBody };

/** Each list checked as a one-key object, so a message names the list (`containers[3].properties...`). */
const listValidator = <T>(kind: string, item: TSchema) => {
  const validate = compileBodyValidator<Record<string, T[]>>(Type.Object({ [kind]: Type.Array(item) }));
  return (list: unknown): T[] => validate({ [kind]: list })[kind];
};
const validators = {
  spaces: listValidator<SpaceCreate>('spaces', SpaceCreate),
  containers: listValidator<ContainerCreate>('containers', ContainerCreate),
  views: listValidator<ViewCreate>('views', ViewCreate),
  dataModels: listValidator<DataModelCreate>('dataModels', DataModelCreate),
};

type Kind = keyof typeof validators;
const KINDS: readonly Kind[] = ['spaces', 'containers', 'views', 'dataModels'];

function catalogError(file: string, message: string): Error {
  return new Error(`core data model catalog ${file}: ${message}`);
}

/**
 * `items` with each after the items it depends on, otherwise in the given order. `deps` gives the keys an
 * item depends on; a key no item has, or a cycle, throws.
 */
function dependencyOrder<T>(items: readonly T[], key: (item: T) => string, deps: (item: T) => string[], what: string, file: string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    if (byKey.has(key(item))) throw catalogError(file, `${key(item)} is declared twice`);
    byKey.set(key(item), item);
  }
  const out: T[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (item: T, trail: string[]): void => {
    const k = key(item);
    if (state.get(k) === 'done') return;
    if (state.get(k) === 'visiting') throw catalogError(file, `the ${what} depend on each other in a cycle: ${[...trail.slice(trail.indexOf(k)), k].join(' -> ')}`);
    state.set(k, 'visiting');
    for (const d of deps(item)) {
      if (d === k) continue;
      const dep = byKey.get(d);
      if (dep === undefined) throw catalogError(file, `${k} names ${d}, which the catalog does not declare`);
      visit(dep, [...trail, k]);
    }
    state.set(k, 'done');
    out.push(item);
  };
  for (const item of items) visit(item, []);
  return out;
}

/** The containers a container names: those it requires and the targets of its direct relations. */
function containerDeps(c: ContainerCreate): string[] {
  const out: string[] = [];
  for (const x of Object.values(c.constraints ?? {})) if (x.require) out.push(containerKey(x.require));
  for (const p of Object.values(c.properties)) if (p.type.type === 'direct' && p.type.container) out.push(containerKey(p.type.container));
  return out;
}

/** The views a view needs to exist when it is applied: those it implements and those its reverse relations go through. */
function viewDeps(v: ViewCreate): string[] {
  const out = (v.implements ?? []).map(viewKey);
  for (const p of Object.values(v.properties ?? {})) if (p.through?.source.type === 'view') out.push(viewKey(p.through.source));
  return out;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The declaration from the catalog file's text; throws naming `file` and the place when it does not hold together. */
export function parseCoreModel(text: string, file = 'core-model.yaml'): CoreModel {
  return parseCatalog([{ text, file }]);
}

/** One catalog file's lists, each checked against its request schema. */
function parseCatalogFile(text: string, file: string): { [K in Kind]: unknown[] } {
  const raw: unknown = parse(text);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw catalogError(file, 'expected a mapping with spaces, containers, views and dataModels');
  const doc = raw as Record<string, unknown>;
  const extra = Object.keys(doc).find((k) => !(KINDS as readonly string[]).includes(k));
  if (extra !== undefined) throw catalogError(file, `unknown key ${JSON.stringify(extra)} (expected ${KINDS.join(', ')})`);
  const lists = {} as { [K in Kind]: unknown[] };
  for (const kind of KINDS) {
    try {
      lists[kind] = validators[kind](doc[kind] ?? []);
    } catch (e) {
      throw e instanceof ApiError ? catalogError(file, e.message) : e;
    }
  }
  return lists;
}

/**
 * The declaration of several catalog files together (a file's views may implement another's); throws naming
 * the file, or all of them for what only holds across files, when it does not hold together.
 */
export function parseCatalog(files: ReadonlyArray<{ text: string; file: string }>): CoreModel {
  const lists = { spaces: [], containers: [], views: [], dataModels: [] } as { [K in Kind]: unknown[] };
  for (const { text, file: name } of files) {
    const one = parseCatalogFile(text, name);
    for (const kind of KINDS) lists[kind].push(...one[kind]);
  }
  const file = files.map((f) => f.file).join(', ');
  const spaces = dependencyOrder(lists.spaces as SpaceCreate[], (s) => s.space, () => [], 'spaces', file);
  const spaceIds = new Set(spaces.map((s) => s.space));
  const checkSpace = (space: string, what: string) => {
    if (!spaceIds.has(space)) throw catalogError(file, `${what} is in the space ${JSON.stringify(space)}, which the catalog does not declare`);
  };
  const containers = lists.containers as ContainerCreate[];
  for (const c of containers) checkSpace(c.space, containerKey(c));
  const views = lists.views as ViewCreate[];
  for (const v of views) checkSpace(v.space, viewKey(v));
  const dataModels = dependencyOrder(lists.dataModels as DataModelCreate[], viewKey, () => [], 'data models', file);
  for (const m of dataModels) checkSpace(m.space, viewKey(m));
  return deepFreeze({
    spaces,
    containers: dependencyOrder(containers, containerKey, containerDeps, 'containers', file),
    views: dependencyOrder(views, viewKey, viewDeps, 'views', file),
    dataModels,
  });
}

let loaded: CoreModel | undefined;

/** The shipped declaration of the core data model, read at the first call. */
export function coreModel(): CoreModel {
  loaded ??= parseCoreModel(readFileSync(CORE_MODEL_FILE, 'utf8'), 'catalog/cdm/core-model.yaml');
  return loaded;
}

let system: CoreModel | undefined;

/** Every system data model the global layer holds: the core data model and the others of `SYSTEM_MODEL_FILES`. */
export function systemModels(): CoreModel {
  system ??= parseCatalog(
    [CORE_MODEL_FILE, ...SYSTEM_MODEL_FILES].map((url) => ({ text: readFileSync(url, 'utf8'), file: `catalog/cdm/${url.pathname.split('/').pop()}` })),
  );
  return system;
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += DM_LIMITS.schemaItems) out.push(items.slice(i, i + DM_LIMITS.schemaItems));
  return out;
}

/**
 * The apply requests that seed a project with the core data model, in the order to apply them: spaces,
 * containers, views, data models, each kind cut into requests of at most the per-request item limit (in
 * dependency order, so a request only names what it or an earlier request applies).
 */
export function coreModelRequests(model: CoreModel = coreModel()): CoreModelRequest[] {
  return [
    ...chunks(model.spaces).map((items) => ({ kind: 'spaces' as const, body: { items } })),
    ...chunks(model.containers).map((items) => ({ kind: 'containers' as const, body: { items } })),
    ...chunks(model.views).map((items) => ({ kind: 'views' as const, body: { items } })),
    ...chunks(model.dataModels).map((items) => ({ kind: 'dataModels' as const, body: { items } })),
  ];
}

/** The spaces of the core data model. */
export function coreModelSpaces(model: CoreModel = coreModel()): string[] {
  return model.spaces.map((s) => s.space);
}
