/**
 * The official JavaScript client, configured as its users configure it, reaches Strata: its default headers
 * (the legacy `cdf-version: V20210406` among them) are accepted on every request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'client' });
});
afterAll(() => h?.close());

describe('the official JavaScript client', () => {
  it('lists, creates and reads back through its default configuration', async () => {
    expect(await h.client.events.list().autoPagingToArray()).toEqual([]);
    const [created] = await h.client.events.create([{ externalId: 'sdk-first', type: 'alarm', startTime: 1_700_000_000_000 }]);
    const [read] = await h.client.events.retrieve([{ id: created.id }]);
    expect(read.externalId).toBe('sdk-first');
    expect(read.startTime).toBe(1_700_000_000_000);
    expect(read.createdTime).toBeInstanceOf(Date);
  });
});
