/**
 * The project limits of data modeling, configured small (STRATA_MODELS_LIMITS): statistics report them, and a
 * write that would pass one is a 400 that applies nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { CONFIG_SECTIONS } from '../../src/areas.js';
import { MODELS_SETTINGS } from '../../src/resources/models/settings.js';

let h: Harness;
const LIMITS = { spaces: 2, containers: 2, containerProperties: 3, views: 2, dataModels: 1, instances: 3, softDeletedInstances: 2 };
const C = { type: 'container', space: 'lim', externalId: 'Thing' };
const node = (externalId: string) => ({ instanceType: 'node', space: 'lim', externalId, sources: [{ source: C, properties: { n: 1 } }] });

beforeAll(async () => {
  h = await startHarness({}, { STRATA_MODELS_LIMITS: JSON.stringify(LIMITS) });
});
afterAll(() => h.close());

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function statistics() {
  return (await h.get('/models/statistics')).body;
}

describe('project limits', () => {
  it('are reported by the statistics as configured', async () => {
    const stats = await statistics();
    expect([stats.spaces.limit, stats.containers.limit, stats.containerProperties.limit, stats.views.limit, stats.dataModels.limit]).toEqual([2, 2, 3, 2, 1]);
    expect([stats.instances.instancesLimit, stats.instances.softDeletedInstancesLimit]).toEqual([3, 2]);
  });

  it('refuse spaces, containers, container properties, views and data models past them', async () => {
    await ok('/models/spaces', { items: [{ space: 'lim' }, { space: 'lim2' }] });
    expect(errorMessage(await h.post('/models/spaces', { items: [{ space: 'lim3' }] }), 400)).toMatch(/at most 2 spaces.*nothing was applied/);
    await ok('/models/containers', { items: [{ space: 'lim', externalId: 'Thing', properties: { n: { type: { type: 'int32' } } } }] });
    const properties = await h.post('/models/containers', { items: [{ space: 'lim', externalId: 'Wide', properties: { a: { type: { type: 'int32' } }, b: { type: { type: 'int32' } }, c: { type: { type: 'int32' } } } }] });
    expect(errorMessage(properties, 400)).toMatch(/at most 3 container properties/);
    await ok('/models/containers', { items: [{ space: 'lim', externalId: 'Other', properties: { a: { type: { type: 'int32' } } } }] });
    expect(errorMessage(await h.post('/models/containers', { items: [{ space: 'lim', externalId: 'Third', properties: { a: { type: { type: 'int32' } } } }] }), 400)).toMatch(/at most 2 containers/);
    const view = (version: string) => ({ space: 'lim', externalId: 'V', version, properties: { n: { container: C, containerPropertyIdentifier: 'n' } } });
    await ok('/models/views', { items: [view('1'), view('2')] });
    expect(errorMessage(await h.post('/models/views', { items: [view('3')] }), 400)).toMatch(/at most 2 view versions/);
    const model = (version: string) => ({ space: 'lim', externalId: 'M', version, views: [{ type: 'view', space: 'lim', externalId: 'V', version: '1' }] });
    await ok('/models/datamodels', { items: [model('1')] });
    expect(errorMessage(await h.post('/models/datamodels', { items: [model('2')] }), 400)).toMatch(/at most 1 data model versions/);
    const stats = await statistics();
    expect([stats.spaces.count, stats.containers.count, stats.containerProperties.count, stats.views.count, stats.dataModels.count]).toEqual([2, 2, 2, 2, 1]);
  });

  it('refuse creating instances past the limit, applying nothing, and still allow changing existing ones', async () => {
    await ok('/models/instances', { items: [node('a'), node('b')] });
    const refused = await h.post('/models/instances', { items: [node('c'), node('d')] });
    expect(errorMessage(refused, 400)).toMatch(/at most 3 instances.*nothing was applied/);
    expect((await statistics()).instances.instances).toBe(2);
    // Nodes created for a type count too.
    const typed = await h.post('/models/instances', { items: [{ ...node('c'), type: { space: 'lim', externalId: 'kind' } }] });
    expect(errorMessage(typed, 400)).toMatch(/at most 3 instances/);
    await ok('/models/instances', { items: [node('c')] });
    const changed = await ok('/models/instances', { items: [{ ...node('a'), sources: [{ source: C, properties: { n: 2 } }] }] });
    expect(changed.items[0].wasModified).toBe(true);
    // The project's hundreds of unit nodes are the service's, and count against none of this.
    const units = await ok('/models/instances/list', { filter: { equals: { property: ['node', 'space'], value: 'cdf_cdm_units' } }, limit: 10 });
    expect(units.items).toHaveLength(10);
  });

  it('refuse deleting past the soft-deleted limit, and count revived instances as live again', async () => {
    expect((await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: 'lim', externalId: 'a' }, { instanceType: 'node', space: 'lim', externalId: 'b' }] })).items).toHaveLength(2);
    const refused = await h.post('/models/instances/delete', { items: [{ instanceType: 'node', space: 'lim', externalId: 'c' }] });
    expect(errorMessage(refused, 400)).toMatch(/at most 2 soft-deleted instances/);
    const inApply = await h.post('/models/instances', { items: [], delete: [{ instanceType: 'node', space: 'lim', externalId: 'c' }] });
    expect(errorMessage(inApply, 400)).toMatch(/at most 2 soft-deleted instances/);
    expect((await statistics()).instances).toMatchObject({ instances: 1, softDeletedInstances: 2 });
    await ok('/models/instances', { items: [node('a')] });
    expect((await statistics()).instances).toMatchObject({ instances: 2, softDeletedInstances: 1 });
  });

  it('are configured by name, and unknown names or values that are not counts are refused', () => {
    const load = (env: Record<string, string>, argv: string[] = []) => loadConfig(argv, env, CONFIG_SECTIONS).sections.of(MODELS_SETTINGS);
    expect(load({ STRATA_MODELS_LIMITS: '{"instances": 10}' }).limits).toEqual({ instances: 10 });
    expect(load({}, ['--models-limits', '{"spaces": 3}']).limits).toEqual({ spaces: 3 });
    expect(() => load({ STRATA_MODELS_LIMITS: '{"nodes": 10}' })).toThrow(ConfigError);
    expect(() => load({ STRATA_MODELS_LIMITS: '{"instances": 0}' })).toThrow(/STRATA_MODELS_LIMITS \(--models-limits\)\.instances/);
  });
});
