/**
 * SAP writeback configuration over HTTP: instances (whose password is never answered), endpoints (with
 * verify, which really connects to a gateway the test starts), mappings, their limits and rules, and the
 * capabilities that guard them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { freePort } from './support/net.js';
import { SAP_PASSWORD, SAP_USER, startSapGateway, type SapGateway } from './support/sap-gateway.js';

const WB = '/writeback/sap';
let h: Harness;
let sap: SapGateway;

const instance = (externalId: string, fields: Record<string, unknown> = {}) => ({ externalId, gatewayUrl: sap.url, client: 100, username: SAP_USER, password: SAP_PASSWORD, ...fields });

beforeAll(async () => {
  sap = await startSapGateway();
  h = await startHarness({}, { STRATA_OUTBOUND_ALLOW: 'loopback', STRATA_CLIENTS: namedClients('wb-reader', 'wb-none', 'wb-requests') });
});
afterAll(async () => {
  await h.close();
  await sap.close();
});

const externalIds = (items: Array<{ externalId: string }>) => items.map((i) => i.externalId).sort();

describe('SAP instances', () => {
  it('are created, listed, read by ids and deleted, and their password is never answered', async () => {
    const created = await h.post(`${WB}/instances`, { items: [instance('inst-a'), instance('inst-b', { client: 7 })] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.items[0]).toEqual({ externalId: 'inst-a', gatewayUrl: sap.url, client: 100, username: SAP_USER, createdTime: expect.any(Number), lastUpdatedTime: expect.any(Number) });
    const list = await h.get(`${WB}/instances`);
    expect(externalIds(list.body.items)).toEqual(['inst-a', 'inst-b']);
    const byIds = await h.post(`${WB}/instances/byids`, { items: [{ externalId: 'inst-b' }] });
    expect(byIds.body.items).toMatchObject([{ externalId: 'inst-b', client: 7 }]);
    for (const res of [created, list, byIds]) expect(JSON.stringify(res.body)).not.toContain(SAP_PASSWORD);

    const page = await h.get(`${WB}/instances?limit=1`);
    expect(page.body.items).toHaveLength(1);
    const rest = await h.get(`${WB}/instances?limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(externalIds([...page.body.items, ...rest.body.items])).toEqual(['inst-a', 'inst-b']);

    expect((await h.post(`${WB}/instances/delete`, { items: [{ externalId: 'inst-b' }] })).status).toBe(200);
    expect(externalIds((await h.get(`${WB}/instances`)).body.items)).toEqual(['inst-a']);
  });

  it('are refused, changing nothing: a duplicate, an unknown one, a bad gateway, broken limits', async () => {
    const before = (await h.get(`${WB}/instances`)).body.items;
    const dup = await h.post(`${WB}/instances`, { items: [instance('inst-a'), instance('inst-new')] });
    expect(dup.status).toBe(409);
    expect(dup.body.error.duplicated).toEqual([{ externalId: 'inst-a' }]);
    const missing = await h.post(`${WB}/instances/byids`, { items: [{ externalId: 'nope' }] });
    expect(errorMessage(missing, 400)).toMatch(/not found/);
    expect(missing.body.error.missing).toEqual([{ externalId: 'nope' }]);
    expect((await h.post(`${WB}/instances/byids`, { items: [{ externalId: 'nope' }], ignoreUnknownIds: true })).body.items).toEqual([]);
    expect(errorMessage(await h.post(`${WB}/instances/delete`, { items: [{ externalId: 'nope' }] }), 400)).toMatch(/not found/);

    expect(errorMessage(await h.post(`${WB}/instances`, { items: [instance('x', { gatewayUrl: 'ftp://sap.example' })] }), 400)).toMatch(/items\[0\]\.gatewayUrl: expected an http or https URL/);
    expect(errorMessage(await h.post(`${WB}/instances`, { items: [instance('x', { gatewayUrl: 'http://169.254.169.254/' })] }), 400)).toMatch(
      /items\[0\]\.gatewayUrl: the address 169\.254\.169\.254 is not one this server may call \(outbound address policy\)/,
    );
    expect(errorMessage(await h.post(`${WB}/instances`, { items: [instance('x'.repeat(256))] }), 400)).toMatch(/externalId/);
    expect(errorMessage(await h.post(`${WB}/instances`, { items: Array.from({ length: 101 }, (_, i) => instance(`many-${i}`)) }), 400)).toMatch(/items/);
    expect(errorMessage(await h.post(`${WB}/instances`, { items: [] }), 400)).toMatch(/items/);
    const { password: _, ...withoutPassword } = instance('x');
    expect(errorMessage(await h.post(`${WB}/instances`, { items: [withoutPassword] }), 400)).toMatch(/password/);
    expect(errorMessage(await h.post(`${WB}/instances`, { items: [instance('x', { colour: 'red' })] }), 400)).toMatch(/colour/);
    expect(errorMessage(await h.post(`${WB}/instances`, { items: [instance('x', { client: 'one' })] }), 400)).toMatch(/client/);
    expect(errorMessage(await h.get(`${WB}/instances?limit=101`), 400)).toMatch(/limit/);
    expect(errorMessage(await h.post(`${WB}/instances/byids`, { items: Array.from({ length: 101 }, (_, i) => ({ externalId: `e${i}` })) }), 400)).toMatch(/items/);
    expect((await h.get(`${WB}/instances`)).body.items).toEqual(before);
  });
});

describe('mappings and endpoints', () => {
  beforeAll(async () => {
    expect((await h.post(`${WB}/instances`, { items: [instance('inst-e')] })).status).toBe(200);
  });

  it('are created, listed, read by ids and deleted', async () => {
    const mapping = await h.post(`${WB}/mappings`, { items: [{ externalId: 'map-1', expression: 'input' }] });
    expect(mapping.status).toBe(200);
    expect(mapping.body.items[0]).toEqual({ externalId: 'map-1', expression: 'input', createdTime: expect.any(Number), lastUpdatedTime: expect.any(Number) });
    const created = await h.post(`${WB}/endpoints`, {
      items: [
        { externalId: 'ep-1', endpointType: 'notification', instanceId: 'inst-e', mappingId: 'map-1' },
        { externalId: 'ep-2', endpointType: 'attachment', instanceId: 'inst-e' },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.items[1]).toEqual({ externalId: 'ep-2', endpointType: 'attachment', instanceId: 'inst-e', createdTime: expect.any(Number), lastUpdatedTime: expect.any(Number) });
    expect(externalIds((await h.get(`${WB}/endpoints`)).body.items)).toEqual(['ep-1', 'ep-2']);
    expect((await h.post(`${WB}/endpoints/byids`, { items: [{ externalId: 'ep-1' }] })).body.items).toMatchObject([{ externalId: 'ep-1', mappingId: 'map-1' }]);
    expect((await h.post(`${WB}/mappings/byids`, { items: [{ externalId: 'map-1' }] })).body.items).toMatchObject([{ externalId: 'map-1', expression: 'input' }]);
    expect(externalIds((await h.get(`${WB}/mappings`)).body.items)).toEqual(['map-1']);

    // A mapping an endpoint uses stays; once the endpoint is gone it can go.
    const inUse = await h.post(`${WB}/mappings/delete`, { items: [{ externalId: 'map-1' }] });
    expect(errorMessage(inUse, 400)).toMatch(/the endpoint "ep-1" uses the mapping "map-1"/);
    expect((await h.post(`${WB}/endpoints/delete`, { items: [{ externalId: 'ep-1' }] })).status).toBe(200);
    expect((await h.post(`${WB}/mappings/delete`, { items: [{ externalId: 'map-1' }] })).status).toBe(200);
    expect((await h.get(`${WB}/mappings`)).body.items).toEqual([]);
    expect(externalIds((await h.get(`${WB}/endpoints`)).body.items)).toEqual(['ep-2']);
  });

  it('refuse endpoints of instances or mappings that do not exist, and bad fields, creating nothing', async () => {
    const before = (await h.get(`${WB}/endpoints`)).body.items;
    expect(errorMessage(await h.post(`${WB}/endpoints`, { items: [{ externalId: 'ep-x', endpointType: 'notification', instanceId: 'no-such' }] }), 400)).toMatch(
      /items\[0\]\.instanceId: the SAP instance "no-such" does not exist/,
    );
    expect(
      errorMessage(
        await h.post(`${WB}/endpoints`, {
          items: [
            { externalId: 'ep-y', endpointType: 'notification', instanceId: 'inst-e' },
            { externalId: 'ep-x', endpointType: 'notification', instanceId: 'inst-e', mappingId: 'no-map' },
          ],
        }),
        400,
      ),
    ).toMatch(/items\[1\]\.mappingId: the mapping "no-map" does not exist/);
    expect(errorMessage(await h.post(`${WB}/endpoints`, { items: [{ externalId: 'ep-x', endpointType: 'invoice', instanceId: 'inst-e' }] }), 400)).toMatch(/endpointType/);
    expect(errorMessage(await h.post(`${WB}/mappings`, { items: [{ externalId: 'm', expression: 'x'.repeat(2001) }] }), 400)).toMatch(/expression/);
    expect((await h.get(`${WB}/endpoints`)).body.items).toEqual(before);
    expect((await h.get(`${WB}/mappings`)).body.items).toEqual([]);
  });

  it('an instance in use is deleted only with force, which deletes its endpoints too', async () => {
    await h.post(`${WB}/instances`, { items: [instance('inst-f')] });
    await h.post(`${WB}/endpoints`, { items: [{ externalId: 'ep-f', endpointType: 'notification', instanceId: 'inst-f' }] });
    const refused = await h.post(`${WB}/instances/delete`, { items: [{ externalId: 'inst-f' }] });
    expect(errorMessage(refused, 400)).toMatch(/the endpoint "ep-f" uses the instance "inst-f".*force: true/);
    expect((await h.post(`${WB}/instances/byids`, { items: [{ externalId: 'inst-f' }] })).status).toBe(200);
    expect((await h.post(`${WB}/instances/delete`, { items: [{ externalId: 'inst-f' }], force: true })).status).toBe(200);
    expect((await h.post(`${WB}/instances/byids`, { items: [{ externalId: 'inst-f' }], ignoreUnknownIds: true })).body.items).toEqual([]);
    expect((await h.post(`${WB}/endpoints/byids`, { items: [{ externalId: 'ep-f' }], ignoreUnknownIds: true })).body.items).toEqual([]);
  });
});

describe('verifying an endpoint', () => {
  beforeAll(async () => {
    const dead = await freePort();
    await h.post(`${WB}/instances`, {
      items: [instance('v-live'), instance('v-wrong', { password: 'wrong' }), instance('v-dead', { gatewayUrl: `http://127.0.0.1:${dead}` })],
    });
    await h.post(`${WB}/endpoints`, {
      items: ['live', 'wrong', 'dead'].map((name) => ({ externalId: `ep-${name}`, endpointType: 'notification', instanceId: `v-${name}` })),
    });
  });

  it('connects to a live gateway, which hands out a CSRF token to the credentials', async () => {
    const fetches = sap.tokenFetches;
    const res = await h.post(`${WB}/endpoints/verify`, { externalId: 'ep-live' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ error: { status: 'success', detail: expect.stringMatching(/Connected to the SAP gateway of the instance "v-live"/) } });
    expect(sap.tokenFetches).toBe(fetches + 1);
  });

  it('reports refused credentials and a gateway that does not answer as failures', async () => {
    const wrong = await h.post(`${WB}/endpoints/verify`, { externalId: 'ep-wrong' });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toEqual({ error: { status: 'failure', detail: expect.stringMatching(/refused the instance's credentials \(HTTP 401\)/) } });
    const dead = await h.post(`${WB}/endpoints/verify`, { externalId: 'ep-dead' });
    expect(dead.status).toBe(200);
    expect(dead.body).toEqual({ error: { status: 'failure', detail: expect.stringMatching(/could not be reached/) } });
  });

  it('refuses an unknown endpoint', async () => {
    const res = await h.post(`${WB}/endpoints/verify`, { externalId: 'ep-none' });
    expect(errorMessage(res, 400)).toMatch(/not found/);
    expect(res.body.error.missing).toEqual([{ externalId: 'ep-none' }]);
  });
});

describe('a gateway whose address the outbound policy refuses', () => {
  let strict: Harness;
  beforeAll(async () => {
    strict = await startHarness();
  });
  afterAll(() => strict.close());

  it('is refused when verified, with a 400 naming the policy', async () => {
    // A host name passes when the instance is created; its address is checked when it is called.
    const port = new URL(sap.url).port;
    expect((await strict.post(`${WB}/instances`, { items: [instance('local', { gatewayUrl: `http://localhost:${port}` })] })).status).toBe(200);
    expect((await strict.post(`${WB}/endpoints`, { items: [{ externalId: 'ep', endpointType: 'notification', instanceId: 'local' }] })).status).toBe(200);
    const fetches = sap.tokenFetches;
    expect(errorMessage(await strict.post(`${WB}/endpoints/verify`, { externalId: 'ep' }), 400)).toMatch(/not one this server may call \(outbound address policy\)/);
    expect(sap.tokenFetches).toBe(fetches);
    // An address given as such is refused at once.
    expect(errorMessage(await strict.post(`${WB}/instances`, { items: [instance('loop', { gatewayUrl: sap.url })] }), 400)).toMatch(/outbound address policy/);
  });
});

describe('capabilities', () => {
  const headers: Record<string, Record<string, string>> = {};
  beforeAll(async () => {
    headers.reader = bearer(await namedClientToken(h, 'wb-reader', [capability('sapWritebackAcl', ['READ'])]));
    headers.none = bearer(await namedClientToken(h, 'wb-none', [capability('eventsAcl', ['READ'])]));
    headers.requests = bearer(await namedClientToken(h, 'wb-requests', [capability('sapWritebackRequestsAcl', ['LIST'])]));
  });

  it('READ lists and reads; WRITE creates, deletes and verifies', async () => {
    expect((await h.request('GET', `${WB}/instances`, undefined, headers.reader)).status).toBe(200);
    expect((await h.request('POST', `${WB}/endpoints/byids`, { items: [{ externalId: 'ep-live' }] }, headers.reader)).status).toBe(200);
    expect(errorMessage(await h.request('POST', `${WB}/instances`, { items: [instance('r')] }, headers.reader), 403)).toMatch(/sapWritebackAcl:WRITE/i);
    expect(errorMessage(await h.request('POST', `${WB}/endpoints/verify`, { externalId: 'ep-live' }, headers.reader), 403)).toMatch(/WRITE/);
    expect(errorMessage(await h.request('POST', `${WB}/mappings/delete`, { items: [{ externalId: 'm' }] }, headers.reader), 403)).toMatch(/WRITE/);
    expect((await h.request('GET', `${WB}/mappings`, undefined, headers.none)).status).toBe(403);
    expect((await h.request('GET', `${WB}/instances`, undefined, headers.requests)).status).toBe(403);
  });

  it('requests need sapWritebackRequestsAcl: LIST lists, WRITE creates and reads by ids', async () => {
    expect((await h.request('GET', `${WB}/requests`, undefined, headers.requests)).status).toBe(202);
    expect(errorMessage(await h.request('POST', `${WB}/requests/byids`, { items: [{ requestId: 'r' }] }, headers.requests), 403)).toMatch(/sapWritebackRequestsAcl:WRITE/i);
    expect((await h.request('GET', `${WB}/requests`, undefined, headers.reader)).status).toBe(403);
    expect((await h.request('POST', `${WB}/requests`, { items: [{ endpointId: 'ep-live', request: [{ payload: {} }] }] }, headers.reader)).status).toBe(403);
  });
});
