/**
 * Dated versions: the `svc-version` header (and its alias `cdf-version`), refusal of malformed values, the
 * version a response says served it, channel gating of beta and alpha operations, and dated behaviour
 * switching on its date.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATED_CHANGES, FIRST_VERSION, RELEASES } from '../src/http/dated-changes.js';
import { route } from '../src/http/route.js';
import { LATEST_STABLE, parseVersion } from '../src/http/versioning.js';
import { errorMessage, type Harness } from './support/harness.js';
import { startCustomHarness } from './support/custom-harness.js';

const READ = { acl: 'eventsAcl', action: 'READ' };

let h: Harness;
beforeAll(async () => {
  h = await startCustomHarness({
    build: {
      extraRoutes: [
        route({ method: 'GET', path: '/test/beta', capability: READ, channel: 'beta', handler: () => ({ ok: true }) }),
        route({ method: 'POST', path: '/test/alpha/:id', capability: READ, channel: 'alpha', handler: () => ({ ok: true }) }),
        route({
          method: 'GET',
          path: '/test/string-limit',
          capability: READ,
          handler: ({ version }) => ({ version: version.name, limit: version.at('stringDatapointMaxLength') }),
        }),
      ],
    },
  });
});
afterAll(() => h.close());

const withVersion = (value: string, header = 'svc-version') => h.request('GET', '/events', undefined, { [header]: value });

describe('the version header', () => {
  it('is optional: without it a request gets the latest stable version, and the response says so', async () => {
    const res = await h.get('/events');
    expect(res.status).toBe(200);
    expect(res.headers['svc-version']).toBe(LATEST_STABLE.name);
    expect(LATEST_STABLE.name).toBe(RELEASES[RELEASES.length - 1]);
    expect(LATEST_STABLE.channel).toBe('stable');
  });

  it('answers with the release whose behaviour served the request, channel included', async () => {
    const cases: Array<[string, string]> = [
      ['20230101', '20230101'],
      ['20250214', '20241011'],
      ['20250215', '20250215'],
      ['20250312', '20250215'],
      ['20250925', '20250215'],
      ['20250926', '20250926'],
      ['20260324', '20250926'],
      ['20260325', '20260325'],
      ['20260504', '20260325'],
      ['20260505', '20260505'],
      ['20260827', '20260505'],
      ['20260828', '20260828'],
      ['20261121', '20260828'],
      ['20250926-beta', '20250926-beta'],
      ['20250101-alpha', '20241011-alpha'],
      ['beta', `${LATEST_STABLE.release}-beta`],
      ['alpha', `${LATEST_STABLE.release}-alpha`],
      // The JavaScript client's legacy form, on every request: the newest stable release, whatever the date.
      ['V20210406', LATEST_STABLE.release],
      ['V20230101', LATEST_STABLE.release],
    ];
    for (const [sent, served] of cases) {
      const res = await withVersion(sent);
      expect(res.status, sent).toBe(200);
      expect(res.headers['svc-version'], sent).toBe(served);
    }
  });

  it('accepts cdf-version, the name existing clients send, as the same header', async () => {
    const res = await withVersion('20250101', 'cdf-version');
    expect(res.status).toBe(200);
    expect(res.headers['svc-version']).toBe('20241011');
    // What the official Python SDK sends with every request unless configured otherwise.
    const sdkDefault = await withVersion('20230101', 'cdf-version');
    expect(sdkDefault.status).toBe(200);
    expect(sdkDefault.headers['svc-version']).toBe('20230101');
    const both = await h.request('GET', '/events', undefined, { 'svc-version': '20250926', 'cdf-version': '20250926' });
    expect(both.status).toBe(200);
    const disagree = await h.request('GET', '/events', undefined, { 'svc-version': '20250926', 'cdf-version': '20250101' });
    expect(errorMessage(disagree, 400)).toBe('Headers svc-version ("20250926") and cdf-version ("20250101") disagree; send one of them');
  });

  it('refuses every malformed value with 400 naming the header and the expected format', async () => {
    const format = 'expected YYYYMMDD, optionally followed by -beta or -alpha (for example 20250926 or 20250926-beta), or beta, alpha, or the legacy V followed by YYYYMMDD';
    const cases: Array<[string, string]> = [
      ['2025-01-01', `Header svc-version: "2025-01-01" is not a version; ${format}`],
      ['20251301', `Header svc-version: "20251301" is not a calendar date; ${format}`],
      ['20250230', `Header svc-version: "20250230" is not a calendar date; ${format}`],
      ['20250001', `Header svc-version: "20250001" is not a calendar date; ${format}`],
      ['20250100', `Header svc-version: "20250100" is not a calendar date; ${format}`],
      ['20250101-gamma', `Header svc-version: "20250101-gamma" is not a version; ${format}`],
      ['20250101-BETA', `Header svc-version: "20250101-BETA" is not a version; ${format}`],
      ['20250101beta', `Header svc-version: "20250101beta" is not a version; ${format}`],
      ['2025010', `Header svc-version: "2025010" is not a version; ${format}`],
      ['202501011', `Header svc-version: "202501011" is not a version; ${format}`],
      ['latest', `Header svc-version: "latest" is not a version; ${format}`],
      ['stable', `Header svc-version: "stable" is not a version; ${format}`],
      ['V20211301', `Header svc-version: "V20211301" is not a calendar date; ${format}`],
      ['v20210406', `Header svc-version: "v20210406" is not a version; ${format}`],
      ['V20210406-beta', `Header svc-version: "V20210406-beta" is not a version; ${format}`],
      ['V2021040', `Header svc-version: "V2021040" is not a version; ${format}`],
      ['', `Header svc-version is empty; ${format}, or leave the header out for the latest stable version`],
    ];
    for (const [value, message] of cases) {
      const res = await withVersion(value);
      expect(errorMessage(res, 400), JSON.stringify(value)).toBe(message);
      expect(res.headers['svc-version']).toBeUndefined();
    }
    expect(errorMessage(await withVersion('2025-01-01', 'cdf-version'), 400)).toBe(`Header cdf-version: "2025-01-01" is not a version; ${format}`);
  });

  it('accepts 29 February only in leap years', async () => {
    expect((await withVersion('20280229')).status).toBe(200);
    expect((await withVersion('20250229')).status).toBe(400);
    expect((await withVersion('21000229')).status).toBe(400);
  });

  it('refuses a version before the first one', async () => {
    const res = await withVersion('20221231');
    expect(errorMessage(res, 400)).toBe(`Header svc-version: version 20221231 is before ${FIRST_VERSION}, the first version of this API`);
    expect((await withVersion(FIRST_VERSION)).status).toBe(200);
  });

  it('is checked before authentication, and stamped on every later answer', async () => {
    expect((await h.request('GET', '/events', undefined, { authorization: '', 'svc-version': 'x' })).status).toBe(400);
    const unauthenticated = await h.request('GET', '/events', undefined, { authorization: '', 'svc-version': '20250101-beta' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers['svc-version']).toBe('20241011-beta');
    const invalid = await h.request('POST', '/events', { items: 'x' }, { 'svc-version': '20250101' });
    expect(invalid.status).toBe(400);
    expect(invalid.headers['svc-version']).toBe('20241011');
  });
});

describe('channels', () => {
  it('gates a beta operation: it needs -beta (or -alpha) and says which header to send', async () => {
    expect(errorMessage(await h.get('/test/beta'), 400)).toBe(
      `GET /test/beta is a beta operation; call it with the header "svc-version: ${LATEST_STABLE.release}-beta" (any version date followed by -beta (or -alpha))`,
    );
    expect(errorMessage(await h.request('GET', '/test/beta', undefined, { 'svc-version': '20250101' }), 400)).toMatch(
      /call it with the header "svc-version: 20241011-beta"/,
    );
    for (const v of ['20250101-beta', '20250926-alpha', 'beta']) {
      const res = await h.request('GET', '/test/beta', undefined, { 'svc-version': v });
      expect(res.status, v).toBe(200);
    }
    expect((await h.request('GET', '/test/beta', undefined, { 'cdf-version': 'beta' })).status).toBe(200);
  });

  it('gates an alpha operation: only -alpha reaches it', async () => {
    for (const v of [undefined, '20250926', '20250926-beta']) {
      const res = await h.request('POST', '/test/alpha/1', {}, v ? { 'svc-version': v } : {});
      expect(errorMessage(res, 400), v).toMatch(/^POST \/test\/alpha\/\{id\} is an alpha operation; call it with the header "svc-version: \d{8}-alpha" \(any version date followed by -alpha\)$/);
    }
    expect((await h.request('POST', '/test/alpha/1', {}, { 'svc-version': '20250926-alpha' })).status).toBe(200);
  });

  it('lets every channel call stable operations', async () => {
    for (const v of ['20250926-beta', '20250926-alpha']) expect((await withVersion(v)).status).toBe(200);
  });
});

describe('dated behaviour', () => {
  it('switches on its date: the string data point limit', async () => {
    const at = async (v?: string) => (await h.request('GET', '/test/string-limit', undefined, v ? { 'svc-version': v } : {})).body;
    expect(await at('20250925')).toEqual({ version: '20250215', limit: { max: 255, unit: 'characters' } });
    expect(await at('20250926')).toEqual({ version: '20250926', limit: { max: 1023, unit: 'utf8Bytes' } });
    expect(await at('20250926-beta')).toEqual({ version: '20250926-beta', limit: { max: 1023, unit: 'utf8Bytes' } });
    expect(await at()).toEqual({ version: LATEST_STABLE.name, limit: { max: 1023, unit: 'utf8Bytes' } });
  });

  it('comes from one consistent table', () => {
    const byKey = new Map<string, Array<(typeof DATED_CHANGES)[number]>>();
    for (const row of DATED_CHANGES) {
      expect(parseVersion(row.date).release, row.key).toBe(row.date);
      expect(row.date > FIRST_VERSION, row.key).toBe(true);
      byKey.set(row.key, [...(byKey.get(row.key) ?? []), row]);
    }
    for (const rows of byKey.values()) {
      rows.sort((a, b) => a.date.localeCompare(b.date));
      for (let i = 1; i < rows.length; i++) {
        expect(rows[i].date).not.toBe(rows[i - 1].date);
        expect(rows[i].before).toEqual(rows[i - 1].after);
      }
    }
  });
});
