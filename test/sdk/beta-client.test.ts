/**
 * The official beta client (`@cognite/sdk-beta`, a package of its own that these tests do not install) is
 * the stable client with `cdf-version: beta` on every request, set in its `initAPIs` as here, and the SDK
 * header `CogniteJavaScriptSDK:<version>-beta`. Stable operations answer it as the newest beta release.
 */
import { CogniteClient, type Datapoints } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_STABLE } from '../../src/http/versioning.js';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

class BetaClient extends CogniteClient {
  protected override get version() {
    return `${super.version}-beta`;
  }

  protected override initAPIs() {
    super.initAPIs();
    this.httpClient.setDefaultHeader('cdf-version', 'beta');
  }
}

let h: SdkHarness;
let beta: BetaClient;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'beta-client' });
  beta = new BetaClient({ appId: 'strata-tests', project: h.client.project, baseUrl: h.baseUrl, oidcTokenProvider: async () => h.token });
  await beta.authenticate();
});
afterAll(() => h?.close());

describe('a client sending cdf-version: beta, as the beta client does', () => {
  it('sends the beta version and is answered by the newest beta release', async () => {
    expect(beta.getDefaultRequestHeaders()['cdf-version']).toBe('beta');
    const res = await beta.get(`/api/v1/projects/${beta.project}/timeseries`, { params: { limit: 1 } });
    expect(res.status).toBe(200);
    expect(res.headers['svc-version']).toBe(`${LATEST_STABLE.release}-beta`);
  });

  it('reaches time series, data points, groups, sessions, token inspection and the project', async () => {
    const [ts] = await beta.timeseries.create([{ externalId: 'beta-ts' }]);
    expect((await beta.timeseries.list({ filter: { externalIdPrefix: 'beta-' } }).autoPagingToArray()).map((t) => t.id)).toEqual([ts.id]);
    expect(await beta.timeseries.aggregate({ filter: { externalIdPrefix: 'beta-' } })).toEqual([{ count: 1 }]);
    await beta.datapoints.insert([{ id: ts.id, datapoints: [{ timestamp: 1000, value: 1 }] }]);
    const [item] = (await beta.datapoints.retrieve({ items: [{ id: ts.id }], start: 0, end: 2000 })) as Datapoints[];
    expect(item.datapoints.map((p) => p.value)).toEqual([1]);
    const [latest] = await beta.datapoints.retrieveLatest([{ id: ts.id }]);
    expect(latest.datapoints.map((p) => p.value)).toEqual([1]);
    const [group] = await beta.groups.create([{ name: 'beta group', members: ['someone'] } as never]);
    expect((await beta.groups.list({ all: true })).map((g) => g.id)).toContain(group.id);
    const [session] = await beta.sessions.create([{ tokenExchange: true }]);
    expect((await beta.sessions.retrieve([{ id: session.id }]))[0].status).toBe('READY');
    const inspect = await beta.get<{ subject: string }>('/api/v1/token/inspect');
    expect(inspect.status).toBe(200);
    expect((await beta.projects.retrieve(beta.project)).urlName).toBe(beta.project);
    await beta.timeseries.delete([{ id: ts.id }]);
  });
});
