/**
 * Functions through the official JavaScript client. The installed stable package has no functions API yet
 * (the client's later source has one, with create, list, retrieve, delete, limits, activate and status), so
 * these tests build that API on the client's own `BaseResourceAPI`, as its source does, and call a
 * function through the same base: the client's authentication, version header and error handling are the
 * ones under test.
 */
import type { CogniteClient } from '@cognite/sdk';
import { BaseResourceAPI, type IdEither, type ItemsWrapper } from '@cognite/sdk-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';
import { canRun, zipOf } from '../functions/support.js';

interface CogniteFunction {
  id: number;
  name: string;
  externalId?: string;
  fileId: number;
  status: string;
  functionType: string;
  createdTime: Date;
  lastCalled?: Date;
}

class FunctionsAPI extends BaseResourceAPI<CogniteFunction> {
  protected override getDateProps() {
    return this.pickDateProps(['items'], ['createdTime', 'lastCalled']);
  }
  create = (items: Array<Record<string, unknown>>) => this.createEndpoint(items);
  list = async (scope: Record<string, unknown> = {}) => (await this.post<ItemsWrapper<CogniteFunction[]>>(this.listPostUrl, { data: scope })).data.items;
  retrieve = (ids: IdEither[], params: { ignoreUnknownIds?: boolean } = {}) => this.retrieveEndpoint(ids, params);
  delete = (ids: IdEither[]) => this.deleteEndpoint(ids);
  limits = async () => (await this.get<Record<string, unknown>>(this.url('limits'))).data;
  activate = async () => (await this.post<{ status: string }>(this.url('status'))).data;
  status = async () => (await this.get<{ status: string }>(this.url('status'))).data;
  call = async (id: number, data: unknown, nonce: string) => (await this.post<{ id: number; status: string }>(this.url(`${id}/call`), { data: { data, nonce } })).data;
  response = async (id: number, callId: number) => (await this.get<{ response: unknown }>(this.url(`${id}/calls/${callId}/response`))).data;
  getCall = async (id: number, callId: number) => (await this.get<{ id: number; status: string }>(this.url(`${id}/calls/${callId}`))).data;
}

// Answers data.x + 1, and the status of a list of events it asks this API for with the call's token.
const CALLS_BACK = `exports.handle = async (data, c) => {
  const res = await fetch(c.baseUrl + '/api/v1/projects/' + c.project + '/events/list', {
    method: 'POST', headers: { authorization: 'Bearer ' + c.token, 'content-type': 'application/json' }, body: '{}' });
  return { x: data.x + 1, events: res.status };
};`;

let h: SdkHarness;
let functions: FunctionsAPI;

beforeAll(async () => {
  h = await startSdkHarness({ name: 'functions' });
  const factory = (h.client as unknown as { apiFactory: <T>(api: new (...args: never[]) => T, path: string) => T }).apiFactory.bind(h.client as CogniteClient);
  functions = factory(FunctionsAPI, 'functions');
});
afterAll(() => h?.close());

describe('functions through the official client', () => {
  it('answers status, activation and limits as the client reads them', async () => {
    expect(['inactive', 'requested', 'activated']).toContain((await functions.status()).status);
    expect((await functions.activate()).status).toBe('activated');
    const limits = await functions.limits();
    expect(limits.timeoutMinutes).toBeGreaterThan(0);
    expect(Array.isArray(limits.runtimes)).toBe(true);
    expect(limits).toHaveProperty('cpuCores');
    expect(limits).toHaveProperty('memoryGb');
  });

  it.runIf(canRun)('creates a function from a file uploaded through the client, lists, retrieves, calls and deletes it', async () => {
    const file = await h.client.files.upload({ name: 'code.zip', mimeType: 'application/zip' }, zipOf({ 'handler.js': CALLS_BACK }), false, true);
    const [created] = await functions.create([{ name: 'sdk function', externalId: 'sdk-fn', fileId: file.id, functionPath: 'handler.js' }]);
    expect(created).toMatchObject({ name: 'sdk function', fileId: file.id, status: 'Queued', functionType: 'classic' });
    expect(created.createdTime).toBeInstanceOf(Date);
    expect((await functions.list({ limit: 10 })).map((f) => f.externalId)).toContain('sdk-fn');
    const [byId] = await functions.retrieve([{ externalId: 'sdk-fn' }]);
    expect(byId.id).toBe(created.id);

    const nonce = async () =>
      (await h.client.post<{ items: Array<{ nonce: string }> }>(`/api/v1/projects/${h.client.project}/sessions`, { data: { items: [{ tokenExchange: true }] } })).data.items[0].nonce;
    const error = await functions.call(987654321, {}, await nonce()).catch((e: { status: number }) => e);
    expect((error as { status: number }).status).toBe(400);
    const settled = () => jobsDone({ strata: h.strata, base: `/api/v1/projects/${h.client.project}` } as Harness);
    await settled();
    const call = await functions.call(created.id, { x: 41 }, await nonce());
    expect(call.status).toBe('Running');
    await settled();
    expect((await functions.getCall(created.id, call.id)).status).toBe('Completed');
    // The code called this API back with the call's session: the caller's rights.
    expect((await functions.response(created.id, call.id)).response).toEqual({ x: 42, events: 200 });

    await functions.delete([{ id: created.id }]);
    expect(await functions.retrieve([{ id: created.id }], { ignoreUnknownIds: true })).toEqual([]);
  });
});
