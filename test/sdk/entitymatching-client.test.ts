/**
 * Entity matching through the official JavaScript client's `entityMatching` API (create, list with a
 * filter, update, retrieve, predict, predictResult, refit, delete), in the order and with the expectations
 * of the client's own integration test, on both backends.
 */
import { CogniteMultiError } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
/** Waits for the fits and predictions the client's calls started (the client's own test retries instead). */
const settled = () => jobsDone({ strata: h.strata, base: '/api/v1/projects/dev' } as Harness);

beforeAll(async () => {
  h = await startSdkHarness({ name: 'entitymatching-client' });
});
afterAll(() => h.close());

const assetA = { externalId: 'entity_match_test_asset_a 1', name: 'entity_match_test_asset_a 1' };
const assetB = { externalId: 'entity_match_test_asset_b 2', name: 'entity_match_test_asset_b 2' };
const tsA = { externalId: `TS_${assetA.name}`, name: `TS_${assetA.name}` };
const tsB = { externalId: `TS_${assetB.name}`, name: `TS_${assetB.name}` };

describe('entity matching through @cognite/sdk', () => {
  const modelExternalId = 'entity_matching_test_fit1';
  const newModelExternalId = 'entity_matching_test_refit1';

  it('creates, lists, updates and retrieves a model', async () => {
    const created = await h.client.entityMatching.create({ name: modelExternalId, externalId: modelExternalId, sources: [assetA, assetB], targets: [tsA, tsB] });
    expect(created.externalId).toBe(modelExternalId);
    const { items } = await h.client.entityMatching.list({ filter: { name: modelExternalId } });
    expect(items.length).toBeGreaterThan(0);
    expect(items[0].name).toBe(modelExternalId);
    const [updated] = await h.client.entityMatching.update([{ externalId: modelExternalId, update: { description: { set: 'ø' } } }]);
    expect(updated.description).toBe('ø');
    await settled();
    const [result] = await h.client.entityMatching.retrieve([{ externalId: modelExternalId }]);
    expect(result.externalId).toBe(modelExternalId);
    expect(result.status).toBe('Completed');
    expect(result.createdTime).toBeInstanceOf(Date);
    expect(result.startTime).toBeInstanceOf(Date);
    expect(result.statusTime).toBeInstanceOf(Date);
  });

  it('predicts, and reads the prediction by its job id', async () => {
    const response = await h.client.entityMatching.predict({ externalId: modelExternalId, sources: [assetA, assetB], targets: [tsA, tsB] });
    expect(response.status).toBe('Queued');
    await settled();
    const result = await h.client.entityMatching.predictResult(response.jobId);
    expect(result.status).toBe('Completed');
    const best = Object.fromEntries(result.items.map((i) => [i.matchFrom.externalId, i.matches[0]?.matchTo.externalId]));
    expect(best).toEqual({ [assetA.externalId]: tsA.externalId, [assetB.externalId]: tsB.externalId });
  });

  it('refits with some true matches, and deletes', async () => {
    const refit = await h.client.entityMatching.refit({
      trueMatches: [{ sourceExternalId: assetA.externalId, targetExternalId: tsA.externalId }],
      externalId: modelExternalId,
      newExternalId: newModelExternalId,
      sources: [assetA, assetB],
      targets: [tsA, tsB],
    });
    expect(refit.externalId).toBe(newModelExternalId);
    await settled();
    const [result] = await h.client.entityMatching.retrieve([{ id: refit.id }]);
    expect(result.externalId).toBe(newModelExternalId);
    expect(result.status).toBe('Completed');
    expect(await h.client.entityMatching.delete([{ externalId: modelExternalId }])).toEqual({});
    const gone = await h.client.entityMatching.retrieve([{ externalId: modelExternalId }]).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(CogniteMultiError);
    expect((gone as CogniteMultiError<unknown, unknown>).status).toBe(400);
    expect((gone as CogniteMultiError<unknown, unknown>).missing).toEqual([{ externalId: modelExternalId }]);
  });
});
