/**
 * Extraction pipelines through the official JavaScript client. Its stable package has no extraction
 * pipelines API, so these tests build one on the client's own `BaseResourceAPI` (as users of the client
 * do for resources it does not wrap), with the paths, bodies and answers of the official Python SDK's
 * `extraction_pipelines`, `.runs` and `.config`: the client's authentication, version header, retries,
 * cursors and error handling are the ones under test.
 */
import { CogniteMultiError, type CogniteClient } from '@cognite/sdk';
import { BaseResourceAPI, type CursorAndAsyncIterator, type FilterQuery, type IdEither } from '@cognite/sdk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

interface ExtractionPipeline {
  id: number;
  externalId: string;
  name: string;
  dataSetId: number;
  schedule?: string;
  metadata?: Record<string, string>;
  lastSuccess: number;
  lastFailure: number;
  lastSeen: number;
  lastMessage?: string;
  createdTime: Date;
  lastUpdatedTime: Date;
}
interface Run {
  id: number;
  externalId?: string;
  status: 'success' | 'failure' | 'seen';
  message?: string;
  createdTime: number;
}
interface ConfigRevision {
  externalId: string;
  revision: number;
  config?: string;
  description?: string;
  createdTime: number;
}

class ExtractionPipelinesAPI extends BaseResourceAPI<ExtractionPipeline> {
  protected override getDateProps() {
    return this.pickDateProps(['items'], ['createdTime', 'lastUpdatedTime']);
  }
  create = (items: Array<Record<string, unknown>>) => this.createEndpoint(items);
  list = (query?: FilterQuery): CursorAndAsyncIterator<ExtractionPipeline> => this.listEndpoint(this.callListEndpointWithGet, query);
  filter = (query: FilterQuery & { filter?: Record<string, unknown> }): CursorAndAsyncIterator<ExtractionPipeline> => this.listEndpoint(this.callListEndpointWithPost, query);
  retrieve = (ids: IdEither[], params?: { ignoreUnknownIds?: boolean }) => this.retrieveEndpoint(ids, params);
  update = (items: Array<IdEither & { update: Record<string, unknown> }>) => this.updateEndpoint(items);
  delete = (ids: IdEither[]) => this.deleteEndpoint(ids);
}

class ExtractionPipelineRunsAPI extends BaseResourceAPI<Run> {
  create = (items: Array<{ externalId: string; status: string; message?: string; createdTime?: number }>) => this.createEndpoint(items);
  list = (externalId: string, query?: FilterQuery): CursorAndAsyncIterator<Run> =>
    this.listEndpoint((params) => this.get(this.url(), { params: { ...params, externalId } }), query);
  filter = (query: FilterQuery & { filter: Record<string, unknown> }): CursorAndAsyncIterator<Run> => this.listEndpoint(this.callListEndpointWithPost, query);
}

class ExtractionPipelineConfigsAPI extends BaseResourceAPI<ConfigRevision> {
  create = async (config: { externalId: string; config: string; description?: string }) => (await this.post<ConfigRevision>(this.url(), { data: config })).data;
  retrieve = async (externalId: string, params: { revision?: number; activeAtTime?: number } = {}) =>
    (await this.get<ConfigRevision>(this.url(), { params: { externalId, ...params } })).data;
  listRevisions = async (externalId: string) => (await this.get<{ items: ConfigRevision[] }>(this.url('revisions'), { params: { externalId } })).data.items;
  revert = async (externalId: string, revision: number) => (await this.post<ConfigRevision>(this.url('revert'), { data: { externalId, revision } })).data;
}

class Client {
  constructor(
    readonly extractionPipelines: ExtractionPipelinesAPI,
    readonly extractionPipelineRuns: ExtractionPipelineRunsAPI,
    readonly extractionPipelineConfigs: ExtractionPipelineConfigsAPI,
  ) {}
}

/** The three APIs on the harness's client, built by the client's own factory. */
function withExtractionPipelines(client: CogniteClient): Client {
  const factory = (client as unknown as { apiFactory: <T>(api: new (...args: never[]) => T, path: string) => T }).apiFactory.bind(client);
  return new Client(factory(ExtractionPipelinesAPI, 'extpipes'), factory(ExtractionPipelineRunsAPI, 'extpipes/runs'), factory(ExtractionPipelineConfigsAPI, 'extpipes/config'));
}

let h: SdkHarness;
let client: Client;
let dataSetId: number;

beforeAll(async () => {
  h = await startSdkHarness({ name: 'extpipes' });
  client = withExtractionPipelines(h.client);
  [{ id: dataSetId }] = await h.client.datasets.create([{ externalId: 'sdk-extpipes' }]);
});
afterAll(() => h?.close());

describe('extraction pipelines through the official client', () => {
  it('creates, lists, filters, retrieves, updates and deletes pipelines', async () => {
    const [created] = await client.extractionPipelines.create([
      { externalId: 'sdk-xp', name: 'SDK pipeline', dataSetId, schedule: 'Continuous', metadata: { a: '1' }, contacts: [{ name: 'Ada', email: 'ada@example.com', role: 'owner', sendNotification: false }] },
    ]);
    expect(created).toMatchObject({ externalId: 'sdk-xp', dataSetId, schedule: 'Continuous', lastSuccess: 0, lastFailure: 0, lastSeen: 0 });
    expect(created.createdTime).toBeInstanceOf(Date);
    for (const n of [1, 2]) await client.extractionPipelines.create([{ externalId: `sdk-xp-${n}`, name: `page ${n}`, dataSetId }]);
    const all = await client.extractionPipelines.list({ limit: 1 }).autoPagingToArray({ limit: Infinity });
    expect(all.map((p) => p.externalId).sort()).toEqual(['sdk-xp', 'sdk-xp-1', 'sdk-xp-2']);
    const filtered = await client.extractionPipelines.filter({ filter: { externalIdPrefix: 'sdk-xp-', dataSetIds: [{ id: dataSetId }] }, limit: 1 }).autoPagingToArray({ limit: Infinity });
    expect(filtered.map((p) => p.externalId).sort()).toEqual(['sdk-xp-1', 'sdk-xp-2']);
    const [byId] = await client.extractionPipelines.retrieve([{ id: created.id }]);
    expect(byId.externalId).toBe('sdk-xp');
    expect(await client.extractionPipelines.retrieve([{ externalId: 'sdk-none' }], { ignoreUnknownIds: true })).toEqual([]);
    const [updated] = await client.extractionPipelines.update([{ id: created.id, update: { metadata: { set: {} }, schedule: { set: '@daily' } } }]);
    expect(updated.schedule).toBe('@daily');
    expect(updated.metadata).toBeUndefined();
    await client.extractionPipelines.delete([{ externalId: 'sdk-xp-2' }]);
    expect(await client.extractionPipelines.retrieve([{ externalId: 'sdk-xp-2' }], { ignoreUnknownIds: true })).toEqual([]);
  });

  it('refuses a bad schedule with the message, as the client reports a failed create', async () => {
    const error = await client.extractionPipelines.create([{ externalId: 'sdk-bad', name: 'bad', dataSetId, schedule: 'now and then' }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CogniteMultiError);
    expect((error as CogniteMultiError<unknown, unknown>).status).toBe(400);
    expect((error as CogniteMultiError<unknown, unknown>).errors[0].message).toMatch(/^items\[0\]\.schedule: "now and then" is not a schedule/);
  });

  it('reports runs, reads them back newest first, filters them, and sees the pipeline move', async () => {
    const now = Date.now();
    const [failure] = await client.extractionPipelineRuns.create([{ externalId: 'sdk-xp', status: 'failure', message: 'lorem ipsum', createdTime: now }]);
    expect(failure).toMatchObject({ externalId: 'sdk-xp', status: 'failure', message: 'lorem ipsum', createdTime: now });
    await client.extractionPipelineRuns.create([{ externalId: 'sdk-xp', status: 'success', message: 'dolor sit amet', createdTime: now - 300 * 86_400_000 }]);
    const runs = await client.extractionPipelineRuns.list('sdk-xp', { limit: 1 }).autoPagingToArray({ limit: Infinity });
    expect(runs.map((r) => r.status)).toEqual(['failure', 'success']);
    const failures = await client.extractionPipelineRuns.filter({ filter: { externalId: 'sdk-xp', statuses: ['failure'] }, limit: 1 }).autoPagingToArray({ limit: 1 });
    expect(failures.map((r) => r.message)).toEqual(['lorem ipsum']);
    const recent = await client.extractionPipelineRuns.filter({ filter: { externalId: 'sdk-xp', createdTime: { min: now - 86_400_000 } } }).autoPagingToArray();
    expect(recent.map((r) => r.id)).toEqual([failure.id]);
    const [pipeline] = await client.extractionPipelines.retrieve([{ externalId: 'sdk-xp' }]);
    expect(pipeline).toMatchObject({ lastFailure: now, lastSeen: now, lastMessage: 'lorem ipsum', lastSuccess: now - 300 * 86_400_000 });
    const bad = await client.extractionPipelineRuns.create([{ externalId: 'sdk-xp', status: 'done' }]).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(CogniteMultiError);
    expect((bad as CogniteMultiError<unknown, unknown>).errors[0].message).toMatch(/items\[0\]\.status/);
  });

  it('creates, retrieves, lists and reverts configuration revisions', async () => {
    const first = await client.extractionPipelineConfigs.create({ externalId: 'sdk-xp', config: 'config abc 123', description: 'description' });
    expect(first).toMatchObject({ externalId: 'sdk-xp', revision: 1, config: 'config abc 123', description: 'description' });
    await client.extractionPipelineConfigs.create({ externalId: 'sdk-xp', config: 'config abc 456' });
    expect((await client.extractionPipelineConfigs.retrieve('sdk-xp')).revision).toBe(2);
    expect((await client.extractionPipelineConfigs.retrieve('sdk-xp', { revision: 1 })).config).toBe('config abc 123');
    const reverted = await client.extractionPipelineConfigs.revert('sdk-xp', 1);
    expect(reverted).toMatchObject({ revision: 3, config: 'config abc 123' });
    expect((await client.extractionPipelineConfigs.listRevisions('sdk-xp')).map((r) => r.revision)).toEqual([3, 2, 1]);
    const missing = await client.extractionPipelineConfigs.retrieve('sdk-none').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 400, errorMessage: expect.stringMatching(/sdk-none.*does not exist/) });
  });
});
