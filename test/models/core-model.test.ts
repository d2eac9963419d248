/**
 * The core data model declaration (catalog/cdm/core-model.yaml, read by core-model.ts) run through the data
 * modeling foundations as seeding would apply it: request schemas, container and view rules, view resolution
 * with `implements`, data models; no reference left dangling; and spot checks of the facts it declares.
 */
import { describe, expect, it } from 'vitest';
import { compileBodyValidator } from '../../src/http/validation.js';
import { ApplyContainersBody, ContainerRead } from '../../src/resources/models/container-schema.js';
import { containerDependencies, containerReadForm, normalizeContainers, type ContainerDefinition } from '../../src/resources/models/containers.js';
import { coreModel, coreModelRequests, coreModelSpaces, CORE_MODEL_ID, parseCoreModel } from '../../src/resources/models/core-model.js';
import { ApplyDataModelsBody } from '../../src/resources/models/data-model-schema.js';
import { normalizeDataModels } from '../../src/resources/models/data-models.js';
import { checkSpaceName, containerKey, viewKey, type ViewId } from '../../src/resources/models/identifiers.js';
import { ApplySpacesBody } from '../../src/resources/models/space-schema.js';
import { viewReadForm, type EffectiveProperty, type ResolvedView } from '../../src/resources/models/view-resolution.js';
import { ApplyViewsBody, ViewRead } from '../../src/resources/models/view-schema.js';
import { normalizeViews, viewDependencies, type ViewDefinition } from '../../src/resources/models/views.js';
import { expectApiError, MemorySchema } from '../support/dm-schema.js';

const META = { createdTime: 0, lastUpdatedTime: 0, isGlobal: true };
const model = coreModel();
const containers: ContainerDefinition[] = normalizeContainers(model.containers);
const views: ViewDefinition[] = normalizeViews(model.views);
const schema = new MemorySchema(containers, views);
const V = (externalId: string): ViewId => ({ space: 'cdf_cdm', externalId, version: 'v1' });
const view = (externalId: string): ResolvedView => schema.resolve(V(externalId));
const prop = (v: string, p: string): EffectiveProperty => {
  const found = view(v).properties.get(p);
  if (!found) throw new Error(`${v} has no property ${p}`);
  return found;
};
const mapped = (v: string, p: string) => {
  const found = prop(v, p);
  if (found.kind !== 'mapped') throw new Error(`${v}.${p} is ${found.kind}, not mapped`);
  return found;
};

/** What the reference answers for each view: usedFor, and how many properties it has with inherited ones. */
const REFERENCE: Record<string, { usedFor: 'node' | 'edge' | 'all'; properties: number }> = {
  Cognite360Image: { usedFor: 'node', properties: 18 },
  Cognite360ImageAnnotation: { usedFor: 'edge', properties: 15 },
  Cognite360ImageCollection: { usedFor: 'node', properties: 8 },
  Cognite360ImageModel: { usedFor: 'node', properties: 7 },
  Cognite360ImageStation: { usedFor: 'node', properties: 5 },
  Cognite3DModel: { usedFor: 'node', properties: 6 },
  Cognite3DObject: { usedFor: 'node', properties: 14 },
  Cognite3DRevision: { usedFor: 'node', properties: 4 },
  Cognite3DTransformation: { usedFor: 'all', properties: 9 },
  CogniteActivity: { usedFor: 'node', properties: 18 },
  CogniteAnnotation: { usedFor: 'edge', properties: 13 },
  CogniteAsset: { usedFor: 'node', properties: 23 },
  CogniteAssetClass: { usedFor: 'node', properties: 6 },
  CogniteAssetType: { usedFor: 'node', properties: 7 },
  CogniteCADModel: { usedFor: 'node', properties: 7 },
  CogniteCADNode: { usedFor: 'node', properties: 10 },
  CogniteCADRevision: { usedFor: 'node', properties: 5 },
  CogniteCubeMap: { usedFor: 'node', properties: 6 },
  CogniteDescribable: { usedFor: 'all', properties: 4 },
  CogniteDiagramAnnotation: { usedFor: 'edge', properties: 25 },
  CogniteEquipment: { usedFor: 'node', properties: 18 },
  CogniteEquipmentType: { usedFor: 'node', properties: 8 },
  CogniteFile: { usedFor: 'node', properties: 18 },
  CogniteFileCategory: { usedFor: 'node', properties: 7 },
  CognitePointCloudModel: { usedFor: 'node', properties: 7 },
  CognitePointCloudRevision: { usedFor: 'node', properties: 5 },
  CognitePointCloudVolume: { usedFor: 'node', properties: 11 },
  CogniteSchedulable: { usedFor: 'node', properties: 4 },
  CogniteSourceSystem: { usedFor: 'node', properties: 6 },
  CogniteSourceable: { usedFor: 'all', properties: 7 },
  CogniteTimeSeries: { usedFor: 'node', properties: 18 },
  CogniteUnit: { usedFor: 'node', properties: 8 },
  CogniteVisualizable: { usedFor: 'node', properties: 1 },
};

describe('the core data model declaration', () => {
  it('declares the spaces, containers, views and the CogniteCore data model', () => {
    expect(coreModelSpaces()).toEqual(['cdf_cdm', 'cdf_cdm_3d', 'cdf_cdm_units']);
    expect(model.containers).toHaveLength(29);
    expect(model.views.map((v) => v.externalId).sort()).toEqual(Object.keys(REFERENCE).sort());
    expect(model.dataModels.map((m) => ({ space: m.space, externalId: m.externalId, version: m.version }))).toEqual([CORE_MODEL_ID]);
    expect(coreModel()).toBe(model);
    expect(Object.isFrozen(model.containers[0].properties)).toBe(true);
  });

  it('is a sequence of apply requests the request schemas accept, in dependency order', () => {
    const requests = coreModelRequests();
    expect(requests.map((r) => r.kind)).toEqual(['spaces', 'containers', 'views', 'dataModels']);
    const bodies = { spaces: ApplySpacesBody, containers: ApplyContainersBody, views: ApplyViewsBody, dataModels: ApplyDataModelsBody };
    for (const r of requests) {
      const body = structuredClone(r.body);
      expect(() => compileBodyValidator(bodies[r.kind])(body)).not.toThrow();
      expect(body).toEqual(r.body);
    }
    const containerOrder = model.containers.map(containerKey);
    for (const [i, def] of containers.entries()) {
      for (const dep of containerDependencies(def)) expect(containerOrder.indexOf(containerKey(dep)), `${containerKey(def)} needs ${containerKey(dep)}`).toBeLessThan(i);
    }
    const viewOrder = model.views.map(viewKey);
    for (const [i, def] of views.entries()) {
      for (const dep of viewDependencies(def).views) if (viewKey(dep) !== viewKey(def)) expect(viewOrder.indexOf(viewKey(dep)), `${viewKey(def)} needs ${viewKey(dep)}`).toBeLessThan(i);
    }
  });

  it('is in spaces users cannot write', () => {
    for (const space of coreModelSpaces()) expectApiError(() => checkSpaceName(space, ['items', 0, 'space']), 400, 'cdf_');
  });

  it('has containers that pass the container rules and name only containers it declares', () => {
    const known = new Set(containers.map(containerKey));
    const validateRead = compileBodyValidator(ContainerRead);
    for (const def of containers) {
      for (const dep of containerDependencies(def)) expect(known.has(containerKey(dep)), `${containerKey(def)} names ${containerKey(dep)}`).toBe(true);
      expect(() => validateRead(containerReadForm(def, META))).not.toThrow();
    }
  });

  it('has views that resolve with what they implement, with the reference shape', () => {
    const resolver = schema.resolver();
    const validateRead = compileBodyValidator(ViewRead);
    for (const [i, def] of views.entries()) {
      const resolved = resolver.validate(def, ['items', i]);
      const expected = REFERENCE[def.externalId];
      expect({ view: def.externalId, usedFor: resolved.usedFor, properties: resolved.properties.size, writable: resolved.writable, queryable: resolved.queryable }).toEqual({
        view: def.externalId,
        usedFor: expected.usedFor,
        properties: expected.properties,
        writable: true,
        queryable: true,
      });
      expect(() => validateRead(viewReadForm(resolved, META))).not.toThrow();
    }
  });

  it('leaves no reference dangling: implemented, source, edge and through views, containers, filters', () => {
    const known = new Set(views.map(viewKey));
    for (const def of views) {
      const named: ViewId[] = [...def.implements];
      for (const p of Object.values(def.properties)) {
        if (p.kind === 'mapped') {
          expect(schema.container(p.container)?.properties[p.containerPropertyIdentifier], `${viewKey(def)} maps ${containerKey(p.container)}.${p.containerPropertyIdentifier}`).toBeDefined();
          if (p.source) named.push(p.source);
        } else if (p.kind === 'edge') {
          named.push(p.source, ...(p.edgeSource ? [p.edgeSource] : []));
        } else {
          named.push(p.source);
          if (p.through.source.type === 'view') named.push(p.through.source);
        }
      }
      for (const id of named) expect(known.has(viewKey(id)), `${viewKey(def)} names ${viewKey(id)}`).toBe(true);
    }
    // A mapped direct relation with a source hint points at the view of a container it may hold.
    for (const def of views) {
      for (const p of Object.values(def.properties)) {
        if (p.kind !== 'mapped' || !p.source) continue;
        const target = schema.container(p.container)!.properties[p.containerPropertyIdentifier].type;
        expect(target.type, `${viewKey(def)}: a source hint on a ${target.type} property`).toBe('direct');
      }
    }
  });

  it('has an acyclic implements graph', () => {
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (id: ViewId, trail: string[]): void => {
      const key = viewKey(id);
      expect(state.get(key), `cycle: ${[...trail, key].join(' implements ')}`).not.toBe('visiting');
      if (state.get(key) === 'done') return;
      state.set(key, 'visiting');
      for (const parent of schema.view(id)!.implements) visit(parent, [...trail, key]);
      state.set(key, 'done');
    };
    for (const def of views) visit(def, []);
  });

  it('has a data model that lists every view once, by reference', () => {
    const [normalized] = normalizeDataModels(model.dataModels);
    expect(normalized.inlineViews).toEqual([]);
    expect(normalized.definition.views.map(viewKey).sort()).toEqual(views.map(viewKey).sort());
    expect(new Set(normalized.definition.views.map(viewKey)).size).toBe(views.length);
  });

  it('can be implemented by a user view', () => {
    const [extra] = normalizeContainers([{ space: 'plant', externalId: 'PumpData', properties: { ratedFlow: { type: { type: 'float64' } } } }]);
    const [pump] = normalizeViews([
      {
        space: 'plant',
        externalId: 'Pump',
        version: '1',
        implements: [{ type: 'view', ...V('CogniteEquipment') }],
        properties: { ratedFlow: { container: { type: 'container', space: 'plant', externalId: 'PumpData' }, containerPropertyIdentifier: 'ratedFlow' } },
      },
    ]);
    const user = new MemorySchema([...containers, extra], [...views, pump]);
    const resolved = user.resolver().validate(pump, ['items', 0]);
    expect([...resolved.properties.keys()]).toEqual(expect.arrayContaining(['name', 'sourceId', 'asset', 'serialNumber', 'activities', 'timeSeries', 'ratedFlow']));
    expect(resolved.mappedContainers.map(containerKey)).toEqual(expect.arrayContaining(['cdf_cdm:CogniteEquipment', 'cdf_cdm:CogniteDescribable', 'cdf_cdm:CogniteSourceable', 'plant:PumpData']));
    expect(resolved.writable).toBe(true);
  });
});

describe('facts of the core data model', () => {
  it('CogniteTimeSeries: type, isStep, units and what it relates to', () => {
    const type = mapped('CogniteTimeSeries', 'type');
    expect(type.container).toEqual({ space: 'cdf_cdm', externalId: 'CogniteTimeSeries' });
    expect(type.definition.type.type).toBe('enum');
    expect(type.definition.type.type === 'enum' && Object.keys(type.definition.type.values).sort()).toEqual(['numeric', 'string']);
    expect(type.definition).toMatchObject({ nullable: false, immutable: true });
    expect(mapped('CogniteTimeSeries', 'isStep').definition).toMatchObject({ type: { type: 'boolean', list: false }, nullable: false, defaultValue: false });
    expect(mapped('CogniteTimeSeries', 'sourceUnit').definition.type).toMatchObject({ type: 'text', list: false });
    const unit = mapped('CogniteTimeSeries', 'unit');
    expect(unit.definition.type).toEqual({ type: 'direct', list: false, container: { space: 'cdf_cdm', externalId: 'CogniteUnit' } });
    expect(unit.source).toEqual(V('CogniteUnit'));
    expect(mapped('CogniteTimeSeries', 'assets')).toMatchObject({ source: V('CogniteAsset'), definition: { type: { type: 'direct', list: true, maxListSize: 1200 } } });
    expect(mapped('CogniteTimeSeries', 'equipment')).toMatchObject({ source: V('CogniteEquipment'), definition: { type: { type: 'direct', list: true } } });
    expect(prop('CogniteTimeSeries', 'activities')).toMatchObject({ kind: 'reverse', connectionType: 'multi_reverse_direct_relation', source: V('CogniteActivity'), through: { identifier: 'timeSeries' }, targetsList: true });
    // Inherited from CogniteDescribable and CogniteSourceable.
    expect(mapped('CogniteTimeSeries', 'name').container).toEqual({ space: 'cdf_cdm', externalId: 'CogniteDescribable' });
    expect(mapped('CogniteTimeSeries', 'source')).toMatchObject({ container: { space: 'cdf_cdm', externalId: 'CogniteSourceable' }, source: V('CogniteSourceSystem') });
  });

  it('CogniteAsset: the hierarchy, and what points at an asset', () => {
    const hierarchy = { parent: 'assetHierarchy_parent', root: 'assetHierarchy_root', path: 'assetHierarchy_path', pathLastUpdatedTime: 'assetHierarchy_path_last_updated_time' };
    for (const [p, c] of Object.entries(hierarchy)) {
      expect(mapped('CogniteAsset', p)).toMatchObject({ container: { space: 'cdf_cdm', externalId: 'CogniteAsset' }, containerPropertyIdentifier: c });
    }
    expect(mapped('CogniteAsset', 'parent')).toMatchObject({ source: V('CogniteAsset'), definition: { type: { type: 'direct', list: false }, nullable: true } });
    expect(mapped('CogniteAsset', 'path').definition.type).toEqual({ type: 'direct', list: true, maxListSize: 100 });
    expect(mapped('CogniteAsset', 'pathLastUpdatedTime').definition.type).toEqual({ type: 'timestamp', list: false });
    expect(prop('CogniteAsset', 'children')).toMatchObject({
      kind: 'reverse',
      connectionType: 'multi_reverse_direct_relation',
      source: V('CogniteAsset'),
      through: { source: { type: 'view', ...V('CogniteAsset') }, identifier: 'parent' },
      targetsList: false,
    });
    for (const [p, source, through] of [
      ['equipment', 'CogniteEquipment', 'asset'],
      ['files', 'CogniteFile', 'assets'],
      ['activities', 'CogniteActivity', 'assets'],
      ['timeSeries', 'CogniteTimeSeries', 'assets'],
    ]) {
      expect(prop('CogniteAsset', p)).toMatchObject({ kind: 'reverse', connectionType: 'multi_reverse_direct_relation', source: V(source), through: { identifier: through } });
    }
    expect(mapped('CogniteAsset', 'object3D')).toMatchObject({ container: { space: 'cdf_cdm', externalId: 'CogniteVisualizable' }, source: V('Cognite3DObject') });
    const asset = containers.find((c) => c.externalId === 'CogniteAsset')!;
    expect(asset.indexes).toMatchObject({ parent: { properties: ['assetHierarchy_parent'] }, root: { properties: ['assetHierarchy_root'] }, path: { properties: ['assetHierarchy_path'] } });
    expect(Object.values(asset.constraints).map((c) => c.constraintType === 'requires' && c.require.externalId).sort()).toEqual(['CogniteDescribable', 'CogniteSourceable', 'CogniteVisualizable']);
  });

  it('CogniteActivity, CogniteEquipment and CogniteFile relations', () => {
    expect(view('CogniteActivity').definition.implements.map((v) => v.externalId)).toEqual(['CogniteDescribable', 'CogniteSourceable', 'CogniteSchedulable']);
    for (const [p, source] of [['assets', 'CogniteAsset'], ['equipment', 'CogniteEquipment'], ['timeSeries', 'CogniteTimeSeries']]) {
      expect(mapped('CogniteActivity', p)).toMatchObject({ container: { externalId: 'CogniteActivity' }, source: V(source), definition: { type: { type: 'direct', list: true } } });
    }
    expect(mapped('CogniteActivity', 'scheduledStartTime').definition.type.type).toBe('timestamp');
    expect(mapped('CogniteEquipment', 'asset')).toMatchObject({ source: V('CogniteAsset'), definition: { type: { type: 'direct', list: false } } });
    expect(prop('CogniteEquipment', 'timeSeries')).toMatchObject({ kind: 'reverse', through: { identifier: 'equipment' } });
    expect(prop('CogniteFile', 'equipment')).toMatchObject({ kind: 'reverse', through: { identifier: 'files' }, targetsList: true });
    expect(mapped('CogniteFile', 'isUploaded').definition).toMatchObject({ type: { type: 'boolean' }, defaultValue: false });
    const category = containers.find((c) => c.externalId === 'CogniteFileCategory')!;
    expect(category.properties.code.nullable).toBe(false);
    expect(category.constraints.uniqueCodeConstraint).toEqual({ constraintType: 'uniqueness', properties: ['code', 'standard'], bySpace: true });
  });

  it('the annotation edges and the 3D views', () => {
    expect(view('CogniteDiagramAnnotation').definition.implements.map((v) => v.externalId)).toEqual(['CogniteDescribable', 'CogniteSourceable', 'CogniteAnnotation']);
    expect(mapped('CogniteAnnotation', 'status').definition.type).toMatchObject({ type: 'enum', values: { Suggested: {}, Approved: {}, Rejected: {} } });
    expect(prop('Cognite3DObject', 'images360')).toMatchObject({
      kind: 'edge',
      type: { space: 'cdf_cdm', externalId: 'image-360-annotation' },
      source: V('Cognite360Image'),
      edgeSource: V('Cognite360ImageAnnotation'),
      direction: 'outwards',
    });
    expect(prop('Cognite3DObject', 'asset')).toMatchObject({ kind: 'reverse', connectionType: 'single_reverse_direct_relation', through: { identifier: 'object3D' } });
    // A view overrides the source hint of what it inherits.
    expect(mapped('CogniteCADRevision', 'model3D').source).toEqual(V('CogniteCADModel'));
    expect(mapped('Cognite3DRevision', 'model3D').source).toEqual(V('Cognite3DModel'));
    expect(mapped('Cognite360Image', 'station360')).toMatchObject({ container: { space: 'cdf_cdm_3d', externalId: 'Cognite360Image' }, containerPropertyIdentifier: 'group3d' });
    expect(view('CogniteCADModel').definition.filter).toEqual({
      and: [{ hasData: [{ type: 'container', space: 'cdf_cdm_3d', externalId: 'Cognite3DModel' }] }, { equals: { property: ['cdf_cdm_3d', 'Cognite3DModel', 'type'], value: 'CAD' } }],
    });
  });
});

describe('reading the catalog', () => {
  const text = (doc: unknown) => JSON.stringify(doc);
  const base = () => structuredClone({ spaces: model.spaces, containers: model.containers, views: model.views, dataModels: model.dataModels }) as unknown as Record<string, unknown[]>;

  it('refuses a catalog that does not hold together, naming the file and the place', () => {
    expect(() => parseCoreModel('[]', 'x.yaml')).toThrow(/catalog x\.yaml: expected a mapping/);
    expect(() => parseCoreModel(text({ ...base(), extra: [] }))).toThrow(/unknown key "extra"/);
    const badType = base();
    (badType.containers[0] as { properties: Record<string, { type: { type: string } }> }).properties.x = { type: { type: 'decimal' } };
    expect(() => parseCoreModel(text(badType))).toThrow(/containers\[0\]\.properties\.x\.type\.type/);
    const dangling = base();
    (dangling.views[0] as { implements: unknown[] }).implements = [{ type: 'view', space: 'cdf_cdm', externalId: 'Missing', version: 'v1' }];
    expect(() => parseCoreModel(text(dangling))).toThrow(/names cdf_cdm:Missing\/v1, which the catalog does not declare/);
    const cycle = base();
    const describable = cycle.views.find((v) => (v as { externalId: string }).externalId === 'CogniteDescribable') as { implements?: unknown[] };
    describable.implements = [{ type: 'view', ...V('CogniteSourceSystem') }];
    expect(() => parseCoreModel(text(cycle))).toThrow(/cycle: cdf_cdm:CogniteDescribable\/v1 -> cdf_cdm:CogniteSourceSystem\/v1 -> cdf_cdm:CogniteDescribable\/v1/);
    const twice = base();
    twice.containers.push(twice.containers[0]);
    expect(() => parseCoreModel(text(twice))).toThrow(`${containerKey(model.containers[0])} is declared twice`);
    const noSpace = base();
    noSpace.spaces = noSpace.spaces.filter((s) => (s as { space: string }).space !== 'cdf_cdm_3d');
    expect(() => parseCoreModel(text(noSpace))).toThrow(/in the space "cdf_cdm_3d", which the catalog does not declare/);
  });

  it('orders items by dependency whatever the file order', () => {
    const reversed = base();
    reversed.containers.reverse();
    reversed.views.reverse();
    const m = parseCoreModel(text(reversed));
    expect(() => normalizeContainers(m.containers)).not.toThrow();
    const order = m.views.map(viewKey);
    for (const [i, v] of m.views.entries()) for (const parent of v.implements ?? []) expect(order.indexOf(viewKey(parent))).toBeLessThan(i);
  });
});
