/**
 * Data products through the official JavaScript client's alpha package (`@cognite/sdk-alpha`, which these
 * tests cannot install): that package is the stable client with `cdf-version: 20230101-alpha` on every
 * request and two resource APIs built on the client's `BaseResourceAPI`, reproduced here with the same
 * paths, bodies and answers: `dataProducts` at `dataproducts` (create, list by GET, retrieve by external
 * id, update, delete) and `dataProductVersions` under `dataproducts/{externalId}/versions`.
 */
import { CogniteClient, CogniteMultiError } from '@cognite/sdk';
import { BaseResourceAPI, type CursorAndAsyncIterator, type FilterQuery } from '@cognite/sdk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

interface DataProduct {
  externalId: string;
  name: string;
  schemaSpace: string;
  description?: string;
  isGoverned: boolean;
  tags: string[];
  domains: string[];
  createdTime: Date;
  lastUpdatedTime: Date;
}
type DataProductCreate = Pick<DataProduct, 'externalId' | 'name'> & Partial<Pick<DataProduct, 'schemaSpace' | 'description' | 'isGoverned' | 'tags'>>;

interface ViewReference {
  space: string;
  externalId: string;
  version: string;
}
interface DataProductVersion {
  version: string;
  views: ViewReference[];
  status: 'draft' | 'published' | 'deprecated';
  description?: string;
  terms: { usage?: string; limitations?: string };
  createdTime: Date;
  lastUpdatedTime: Date;
}
type VersionCreate = Pick<DataProductVersion, 'version' | 'views'> & Partial<Pick<DataProductVersion, 'status' | 'description' | 'terms'>>;

const DATES = ['createdTime', 'lastUpdatedTime'] as const;

class DataProductsAPI extends BaseResourceAPI<DataProduct> {
  protected override getDateProps() {
    return this.pickDateProps(['items'], [...DATES]);
  }
  create = (items: [DataProductCreate]) => this.createEndpoint(items);
  list = (query?: FilterQuery): CursorAndAsyncIterator<DataProduct> => this.listEndpoint(this.callListEndpointWithGet, query);
  retrieve = async (externalId: string) => {
    const response = await this.get<DataProduct>(this.url(encodeURIComponent(externalId)));
    return this.addToMapAndReturn(response.data, response);
  };
  update = (items: [{ externalId: string; update: Record<string, unknown> }]) => this.updateEndpoint(items, this.url('update'));
  delete = (ids: [{ externalId: string }]) => this.deleteEndpoint(ids);
}

class DataProductVersionsAPI extends BaseResourceAPI<DataProductVersion> {
  protected override getDateProps() {
    return this.pickDateProps(['items'], [...DATES]);
  }
  private under = (externalId: string) => this.url(`${encodeURIComponent(externalId)}/versions`);
  create = (externalId: string, items: [VersionCreate]) => this.createEndpoint(items, this.under(externalId));
  list = (externalId: string, query?: FilterQuery): CursorAndAsyncIterator<DataProductVersion> =>
    this.listEndpoint((params) => this.get(this.under(externalId), { params }), query);
  retrieve = async (externalId: string, version: string) => {
    const response = await this.get<DataProductVersion>(`${this.under(externalId)}/${encodeURIComponent(version)}`);
    return this.addToMapAndReturn(response.data, response);
  };
  update = (externalId: string, items: [{ version: string; update: Record<string, unknown> }]) => this.updateEndpoint(items, `${this.under(externalId)}/update`);
  delete = (externalId: string, ids: Array<{ version: string }>) => this.deleteEndpoint(ids, undefined, `${this.under(externalId)}/delete`);
}

class AlphaClient extends CogniteClient {
  // Set by initAPIs, which the base constructor calls: an initialized field would overwrite them.
  declare dataProducts: DataProductsAPI;
  declare dataProductVersions: DataProductVersionsAPI;

  protected override initAPIs() {
    super.initAPIs();
    this.httpClient.setDefaultHeader('cdf-version', '20230101-alpha');
    this.dataProducts = this.apiFactory(DataProductsAPI, 'dataproducts');
    this.dataProductVersions = this.apiFactory(DataProductVersionsAPI, 'dataproducts');
  }
}

let h: SdkHarness;
let alpha: AlphaClient;
const SPACE = 'sdk_dp_space';
const view = { space: SPACE, externalId: 'sdk_dp_view', version: '1' };

beforeAll(async () => {
  h = await startSdkHarness({ name: 'dataproducts-client' });
  alpha = new AlphaClient({ appId: 'strata-tests', project: h.client.project, baseUrl: h.baseUrl, oidcTokenProvider: async () => h.token });
  await alpha.authenticate();
  await h.client.spaces.upsert([{ space: SPACE }, { space: 'sdk_dp_other' }]);
  await h.client.containers.upsert([{ space: SPACE, externalId: 'sdk_dp_container', properties: { test: { type: { type: 'text' } } } }]);
  await h.client.views.upsert([
    { ...view, properties: { test: { container: { type: 'container', space: SPACE, externalId: 'sdk_dp_container' }, containerPropertyIdentifier: 'test' } } },
  ]);
});
afterAll(() => h?.close());

describe('data products through the alpha client', () => {
  it('creates, lists, retrieves, updates and deletes a data product', async () => {
    const [created] = await alpha.dataProducts.create([{ externalId: 'sdk-dp', name: 'SDK data product', schemaSpace: SPACE, isGoverned: true, tags: ['integration'] }]);
    expect(created).toMatchObject({ externalId: 'sdk-dp', name: 'SDK data product', schemaSpace: SPACE, isGoverned: true, tags: ['integration'], domains: [] });
    expect(created.createdTime).toBeInstanceOf(Date);
    expect(created).not.toHaveProperty('id');

    const page = await alpha.dataProducts.list({ limit: 10 });
    expect(page.items.map((p) => p.externalId)).toContain('sdk-dp');
    expect((await alpha.dataProducts.retrieve('sdk-dp')).externalId).toBe('sdk-dp');

    const [updated] = await alpha.dataProducts.update([
      { externalId: 'sdk-dp', update: { description: { set: 'updated' }, isGoverned: { set: false }, tags: { set: ['integration', 'updated'] } } },
    ]);
    expect(updated).toMatchObject({ description: 'updated', isGoverned: false, tags: ['integration', 'updated'] });

    await expect(alpha.dataProducts.delete([{ externalId: 'sdk-dp' }])).resolves.toBeDefined();
    await expect(alpha.dataProducts.retrieve('sdk-dp')).rejects.toMatchObject({ status: 400 });
  });

  it('pages through data products with autoPagingToArray', async () => {
    for (const n of [1, 2, 3]) await alpha.dataProducts.create([{ externalId: `sdk-page-${n}`, name: `page ${n}`, schemaSpace: 'sdk_dp_other' }]);
    const all = await alpha.dataProducts.list({ limit: 1 }).autoPagingToArray({ limit: Infinity });
    expect(all.map((p) => p.externalId).filter((x) => x.startsWith('sdk-page-'))).toEqual(['sdk-page-1', 'sdk-page-2', 'sdk-page-3']);
  });

  it('creates, lists, retrieves, updates and deletes versions of a data product', async () => {
    await alpha.dataProducts.create([{ externalId: 'sdk-dpv', name: 'versions', schemaSpace: SPACE }]);
    const [v1] = await alpha.dataProductVersions.create('sdk-dpv', [{ version: '1.0.0', views: [view], description: 'first', terms: { usage: 'integration test' } }]);
    expect(v1).toMatchObject({ version: '1.0.0', views: [view], status: 'draft', terms: { usage: 'integration test' } });
    expect(v1.createdTime).toBeInstanceOf(Date);
    await alpha.dataProductVersions.create('sdk-dpv', [{ version: '2.0.0', views: [view] }]);

    const listed = await alpha.dataProductVersions.list('sdk-dpv', { limit: 10 });
    expect(listed.items.map((v) => v.version)).toEqual(['1.0.0', '2.0.0']);
    expect((await alpha.dataProductVersions.list('sdk-dpv', { limit: 1 }).autoPagingToArray({ limit: Infinity })).map((v) => v.version)).toEqual(['1.0.0', '2.0.0']);
    expect((await alpha.dataProductVersions.retrieve('sdk-dpv', '1.0.0')).version).toBe('1.0.0');

    const [updated] = await alpha.dataProductVersions.update('sdk-dpv', [
      { version: '1.0.0', update: { description: { set: 'updated' }, status: { set: 'published' }, terms: { modify: { usage: { set: 'updated usage' } } } } },
    ]);
    expect(updated).toMatchObject({ description: 'updated', status: 'published', terms: { usage: 'updated usage' } });

    await expect(alpha.dataProductVersions.delete('sdk-dpv', [{ version: '2.0.0' }])).resolves.toBeDefined();
    expect((await alpha.dataProductVersions.list('sdk-dpv').autoPagingToArray()).map((v) => v.version)).toEqual(['1.0.0']);
    await alpha.dataProducts.delete([{ externalId: 'sdk-dpv' }]);
    await expect(alpha.dataProductVersions.list('sdk-dpv').autoPagingToArray()).rejects.toMatchObject({ status: 400 });
  });

  it('is refused, with the reason, for a version under a data product that does not exist', async () => {
    // A create answers a failure as the client's multi-error, with the server's error inside.
    const refused = await alpha.dataProductVersions.create('sdk-none', [{ version: '1.0.0', views: [view] }]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CogniteMultiError);
    expect((refused as CogniteMultiError<unknown, unknown>).status).toBe(400);
    expect((refused as CogniteMultiError<unknown, unknown>).errors[0].message).toMatch(/data product \{"externalId":"sdk-none"\} does not exist/);
  });
});
