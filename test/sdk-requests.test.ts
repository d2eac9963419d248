/**
 * Requests shaped exactly as the official Python SDK sends them: every POST body gzipped, `cdf-version:
 * 20230101` on every request, and list bodies `{"filter": {}, "limit": 1000, "cursor": null}` (with
 * `"partition": "m/n"` for partitioned lists), following `nextCursor` until it is absent.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const SDK_HEADERS = {
  'content-type': 'application/json',
  'content-encoding': 'gzip',
  'cdf-version': '20230101',
  'x-cdp-sdk': 'CognitePythonSDK:7.0.0',
  'x-cdp-app': 'strata-test',
};
const sdkPost = (path: string, body: unknown) => h.request('POST', path, gzipSync(JSON.stringify(body)), SDK_HEADERS);

async function create(path: string, items: unknown[]): Promise<void> {
  const res = await sdkPost(path, { items });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(201);
}

/** All items of a list, read as the SDK reads it: cursor null first, then each nextCursor. */
async function listAll(resource: string, partition?: string): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const res = await sdkPost(`/${resource}/list`, { filter: {}, limit: 7, cursor, ...(partition ? { partition } : {}) });
    expect(res.status, `${resource} page ${page}: ${JSON.stringify(res.body)}`).toBe(200);
    ids.push(...res.body.items.map((item: { id: number }) => item.id));
    cursor = res.body.nextCursor ?? null;
    if (cursor === null) return ids;
  }
  throw new Error(`${resource}: no end after 100 pages`);
}

describe('requests as the official Python SDK sends them', () => {
  beforeAll(async () => {
    const n = Array.from({ length: 20 }, (_, i) => i);
    await create('/datasets', n.slice(0, 9).map((i) => ({ externalId: `sdk-ds-${i}` })));
    await create('/assets', n.map((i) => ({ externalId: `sdk-a-${i}`, name: `asset ${i}` })));
    await create('/events', n.map((i) => ({ externalId: `sdk-e-${i}`, startTime: i })));
    await create('/timeseries', n.map((i) => ({ externalId: `sdk-t-${i}` })));
  });

  for (const [resource, count] of [['events', 20], ['assets', 20], ['timeseries', 20], ['datasets', 9]] as const) {
    it(`lists every ${resource} item once, starting from "cursor": null`, async () => {
      const ids = await listAll(resource);
      expect(ids).toHaveLength(count);
      expect(new Set(ids).size).toBe(count);
    });
  }

  for (const resource of ['events', 'assets', 'timeseries'] as const) {
    it(`reads ${resource} in partitions, each starting from "cursor": null`, async () => {
      const all = await listAll(resource);
      const parts = await Promise.all(['1/3', '2/3', '3/3'].map((p) => listAll(resource, p)));
      expect(parts.flat().sort((a, b) => a - b)).toEqual([...all].sort((a, b) => a - b));
    });
  }

  it('still refuses null where it means nothing', async () => {
    expect(errorMessage(await sdkPost('/events/list', { limit: null, cursor: null }), 400)).toMatch(/limit: null is not allowed/);
    expect(errorMessage(await sdkPost('/events/list', { cursor: 5 }), 400)).toMatch(/cursor/);
    expect(errorMessage(await sdkPost('/events/list', { cursor: '' }), 400)).toMatch(/cursor/);
  });
});
