import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('events: create, retrieve, update, delete', () => {
  it('creates events and returns them with ids and timestamps', async () => {
    const res = await h.post('/events', {
      items: [
        { externalId: 'crud-1', type: 'alarm', startTime: 10, endTime: 20, metadata: { Site: 'Oslo' }, assetIds: [3, 4] },
        { description: 'no external id' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.items).toHaveLength(2);
    const [a, b] = res.body.items;
    expect(a).toMatchObject({ externalId: 'crud-1', type: 'alarm', startTime: 10, endTime: 20, metadata: { Site: 'Oslo' }, assetIds: [3, 4] });
    expect(Number.isSafeInteger(a.id)).toBe(true);
    expect(a.createdTime).toBe(a.lastUpdatedTime);
    expect(b.externalId).toBeUndefined();
    const got = await h.get(`/events/${a.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(a);
  });
});

describe('errors', () => {
  it('refuses a missing token with 401', async () => {
    const res = await h.request('GET', '/events', undefined, { authorization: '' });
    expect(errorMessage(res, 401)).toMatch(/Authorization/);
  });
});
