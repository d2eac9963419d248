/**
 * Seeding is applying the core data model's requests: the declaration applied over HTTP, as a client would,
 * with its spaces renamed (users cannot write spaces starting with `cdf_`), then read back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coreModelRequests } from '../../src/resources/models/core-model.js';
import { startHarness, type Harness } from '../support/harness.js';

const RENAMED: Record<string, string> = { cdf_cdm: 'cdm', cdf_cdm_3d: 'cdm_3d', cdf_cdm_units: 'cdm_units' };
/** The requests with every space renamed (spaces appear as whole JSON strings: ids, references, filter property paths). */
const renamed = (body: unknown): unknown => JSON.parse(JSON.stringify(body).replace(/"(cdf_cdm(?:_3d|_units)?)"/g, (_, s: string) => JSON.stringify(RENAMED[s])));
const PATHS = { spaces: '/models/spaces', containers: '/models/containers', views: '/models/views', dataModels: '/models/datamodels' };

describe('applying the core data model', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('applies every request, and reads back what the foundations resolved', async () => {
    for (const r of coreModelRequests()) {
      const res = await h.post(PATHS[r.kind], renamed(r.body));
      expect(res.status, `${r.kind}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.items).toHaveLength(r.body.items.length);
    }
    const asset = await h.post('/models/views/byids', { items: [{ space: 'cdm', externalId: 'CogniteAsset', version: 'v1' }] });
    expect(asset.status).toBe(200);
    const [view] = asset.body.items;
    expect(Object.keys(view.properties)).toHaveLength(23);
    expect(view).toMatchObject({ usedFor: 'node', writable: true, queryable: true });
    expect(view.properties.children).toMatchObject({ connectionType: 'multi_reverse_direct_relation', through: { identifier: 'parent' }, targetsList: false });
    const model = await h.post('/models/datamodels/byids', { items: [{ space: 'cdm', externalId: 'CogniteCore', version: 'v1' }] });
    expect(model.body.items[0].views).toHaveLength(33);
  });

  it('applies again without changing anything, as seeding a project that has it would', async () => {
    const before = await h.get('/models/containers?space=cdm&limit=1000');
    for (const r of coreModelRequests()) {
      const res = await h.post(PATHS[r.kind], renamed(r.body));
      expect(res.status, `${r.kind}: ${JSON.stringify(res.body)}`).toBe(200);
    }
    const after = await h.get('/models/containers?space=cdm&limit=1000');
    expect(after.body.items.length).toBeGreaterThan(0);
    expect(after.body.items).toEqual(before.body.items);
  });
});
