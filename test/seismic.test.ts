/**
 * The seismic API, removed on 2026-05-05: its operations answer 410 saying so from that version (and without
 * a version header), and before it the 501 of an operation Strata does not implement, on both backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const calls: Array<[string, string, unknown]> = [
  ['GET', '/seismic/seismics/segy/42', undefined],
  ['POST', '/seismic/batchdownload', { items: [{ seismicId: 42 }] }],
];

describe('the seismic API', () => {
  it.each(['20260505', '20261127', '20260505-beta', '20260601-alpha'])('is gone at %s, with a message saying it was removed', async (version) => {
    for (const [method, path, body] of calls) {
      const res = await h.request(method, path, body, { 'svc-version': version });
      expect(errorMessage(res, 410)).toMatch(/^The seismic API was removed on 2026-05-05/);
    }
  });

  it('is gone without a version header (the latest version)', async () => {
    expect(errorMessage(await h.get('/seismic/seismics/segy/42'), 410)).toMatch(/removed on 2026-05-05/);
  });

  it.each(['20230101', '20260504', '20260504-beta'])('is not implemented at %s, as any operation Strata lacks', async (version) => {
    for (const [method, path, body] of calls) {
      const res = await h.request(method, path, body, { 'svc-version': version });
      expect(errorMessage(res, 501)).toMatch(new RegExp(`^Strata does not implement ${method} /seismic/`));
    }
  });
});
