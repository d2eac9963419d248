/**
 * What operators watch: liveness, readiness (the database is reachable) and the metrics, which count requests
 * by operation (never by raw URL) and status, time them, count refusals by the throttle and show the
 * database's connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { openTestStore } from './support/test-store.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { STRATA_RATE_LIMIT: '0.001', STRATA_RATE_BURST: '4' });
});
afterAll(() => h.close());

describe('health', () => {
  it('answers live and ready without a token', async () => {
    const live = await h.request('GET', '/health/live', undefined, { authorization: '' });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'live' });
    const ready = await h.request('GET', '/health/ready', undefined, { authorization: '' });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
  });

  it('is not ready while its database cannot be reached, and says nothing of where it is', async () => {
    const store = await openTestStore();
    const other = await startHarness({}, {}, { store });
    try {
      await store.close();
      const ready = await other.request('GET', '/health/ready', undefined, { authorization: '' });
      expect(errorMessage(ready, 503)).toBe('Not ready: the database cannot be reached');
      expect(ready.headers['retry-after']).toBe('1');
      expect((await other.request('GET', '/health/live', undefined, { authorization: '' })).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('metrics', () => {
  it('counts requests by operation and status, times them, and counts throttled ones', async () => {
    await h.post('/events', { items: [{ externalId: 'm-1' }] });
    await h.get('/events/123456');
    await h.post('/events/list', {});
    // The budget allows four; the rest of this burst is refused.
    for (let i = 0; i < 3; i++) await h.post('/events/list', {});
    const res = await h.request('GET', '/metrics', undefined, { authorization: '' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body as string;
    expect(text).toMatch(/strata_http_requests_total\{operation="POST \/events",status="201"\} 1/);
    expect(text).toMatch(/strata_http_requests_total\{operation="GET \/events\/:id",status="400"\} 1/);
    expect(text).toMatch(/strata_http_requests_total\{operation="POST \/events\/list",status="429"\} [1-9]/);
    expect(text).toMatch(/strata_throttled_requests_total\{operation="POST \/events\/list"\} [1-9]/);
    expect(text).toMatch(/strata_http_request_duration_seconds_bucket\{le="0\.1",operation="POST \/events\/list"\} \d+/);
    expect(text).toMatch(/strata_db_connections\{state="total"\} \d+/);
    expect(text).toMatch(/strata_process_cpu_seconds_total [0-9.e+-]+/);
    expect(Number(/strata_process_cpu_seconds_total ([0-9.e+-]+)/.exec(text)![1])).toBeGreaterThan(0);
    expect(Number(/strata_process_resident_memory_bytes (\d+)/.exec(text)![1])).toBeGreaterThan(1_000_000);
    expect(Number(/strata_nodejs_heap_used_bytes (\d+)/.exec(text)![1])).toBeGreaterThan(0);
    expect(Number(/strata_process_start_time_seconds ([0-9.e+-]+)/.exec(text)![1])).toBeLessThanOrEqual(Date.now() / 1000);
    expect(text).not.toMatch(/123456/);
  });

  it('can be switched off', async () => {
    const off = await startHarness({}, { STRATA_METRICS: 'off' });
    try {
      expect((await off.request('GET', '/metrics', undefined, { authorization: '' })).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
