/**
 * Space-scoped data modeling capabilities: a principal holding dataModelsAcl and dataModelInstancesAcl in
 * `spaceIdScope` [a] sees only space a's schema and instances in every read (lists, by ids, search,
 * aggregate, statistics) and cannot write anywhere else (403, nothing written).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from '../support/auth.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let token: string;
let propsToken: string;
const CLIENTS = [
  { clientId: 'space-a', clientSecret: 'space-a-secret', groups: ['space-a'] },
  { clientId: 'props', clientSecret: 'props-secret', groups: ['props'] },
];
const C = (space: string) => ({ type: 'container', space, externalId: 'Thing' });
const V = (space: string) => ({ type: 'view', space, externalId: 'Thing', version: '1' });

const as = (method: string, path: string, body?: unknown) => h.request(method, path, body, bearer(token));

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  await h.post('/models/spaces', { items: [{ space: 'a' }, { space: 'b' }] });
  for (const space of ['a', 'b']) {
    await h.post('/models/containers', { items: [{ space, externalId: 'Thing', properties: { name: { type: { type: 'text' } } } }] });
    await h.post('/models/views', { items: [{ space, externalId: 'Thing', version: '1', properties: { name: { container: C(space), containerPropertyIdentifier: 'name' } } }] });
    const res = await h.post('/models/instances', { items: [{ instanceType: 'node', space, externalId: `n-${space}`, sources: [{ source: V(space), properties: { name: `thing ${space}` } }] }] });
    expect(res.status).toBe(200);
  }
  const scope = { spaceIdScope: { spaceIds: ['a'] } };
  await createGroup(h, {
    name: 'Space a',
    sourceId: 'space-a',
    capabilities: [capability('dataModelsAcl', ['READ', 'WRITE'], scope), capability('dataModelInstancesAcl', ['READ', 'WRITE'], scope)],
  });
  token = await clientToken(h, 'space-a', 'space-a-secret');
  // Properties anywhere, creation and deletion in space b only.
  await createGroup(h, {
    name: 'Properties',
    sourceId: 'props',
    capabilities: [
      capability('dataModelsAcl', ['READ'], { all: {} }),
      capability('dataModelInstancesAcl', ['READ', 'WRITE_PROPERTIES'], { all: {} }),
      capability('dataModelInstancesAcl', ['WRITE'], { spaceIdScope: { spaceIds: ['b'] } }),
    ],
  });
  propsToken = await clientToken(h, 'props', 'props-secret');
});
afterAll(() => h.close());

describe('spaceIdScope', () => {
  it('lists and reads by ids only the spaces, schema and instances in scope', async () => {
    expect((await as('GET', '/models/spaces')).body.items.map((s: any) => s.space)).toEqual(['a']);
    expect((await as('POST', '/models/spaces/byids', { items: [{ space: 'a' }, { space: 'b' }] })).body.items.map((s: any) => s.space)).toEqual(['a']);
    expect((await as('GET', '/models/containers')).body.items.map((c: any) => c.space)).toEqual(['a']);
    expect((await as('POST', '/models/views/byids', { items: ['a', 'b'].map((space) => ({ space, externalId: 'Thing', version: '1' })) })).body.items.map((v: any) => v.space)).toEqual(['a']);
    const list = await as('POST', '/models/instances/list', { limit: 1000 });
    expect(list.body.items.map((i: any) => i.externalId)).toEqual(['n-a']);
    const byIds = await as('POST', '/models/instances/byids', { items: [{ instanceType: 'node', space: 'b', externalId: 'n-b' }] });
    expect(byIds.body.items).toEqual([]);
    const search = await as('POST', '/models/instances/search', { view: V('a'), query: 'thing' });
    expect(search.body.items.map((i: any) => i.externalId)).toEqual(['n-a']);
    expect((await as('GET', '/models/statistics/spaces')).body.items.map((s: any) => s.space)).toEqual(['a']);
    const stats = (await as('GET', '/models/statistics')).body;
    expect([stats.spaces.count, stats.containers.count, stats.views.count, stats.instances.nodes, stats.containerProperties.count]).toEqual([1, 1, 1, 1, 1]);
  });

  it('refuses writes outside the scope with 403, writing nothing', async () => {
    const space = await as('POST', '/models/spaces', { items: [{ space: 'a' }, { space: 'c' }] });
    expect(errorMessage(space, 403)).toMatch(/items\[1\]\.space: dataModelsAcl:WRITE is granted only in spaceIdScope \["a"\]/);
    const write = await as('POST', '/models/instances', {
      items: [
        { instanceType: 'node', space: 'a', externalId: 'n-a2' },
        { instanceType: 'node', space: 'b', externalId: 'n-b2' },
      ],
    });
    expect(errorMessage(write, 403)).toMatch(/items\[1\]\.space: dataModelInstancesAcl:WRITE/);
    const del = await as('POST', '/models/instances/delete', { items: [{ instanceType: 'node', space: 'b', externalId: 'n-b' }] });
    expect(errorMessage(del, 403)).toMatch(/dataModelInstancesAcl:WRITE/);
    const all = await h.post('/models/instances/byids', {
      items: ['n-a2', 'n-b2', 'n-b'].map((externalId) => ({ instanceType: 'node', space: externalId.includes('b') ? 'b' : 'a', externalId })),
    });
    expect(all.body.items.map((i: any) => i.externalId)).toEqual(['n-b']);
    expect(errorMessage(await as('POST', '/models/containers/delete', { items: [{ space: 'b', externalId: 'Thing' }] }), 403)).toMatch(/dataModelsAcl:WRITE/);
    expect((await as('POST', '/models/instances', { items: [{ instanceType: 'node', space: 'a', externalId: 'ok' }] })).status).toBe(200);
  });

  it('refuses a group granting spaceIdScope that is malformed', async () => {
    const res = await h.post('/groups', { items: [{ name: 'bad', capabilities: [capability('dataModelsAcl', ['READ'], { spaceIdScope: { spaceIds: [] } })] }] });
    expect(errorMessage(res, 400)).toMatch(/spaceIds/);
  });
});

describe('WRITE_PROPERTIES', () => {
  const props = (method: string, path: string, body?: unknown) => h.request(method, path, body, bearer(propsToken));
  const node = (space: string, externalId: string, name?: string) => ({
    instanceType: 'node',
    space,
    externalId,
    ...(name === undefined ? {} : { sources: [{ source: V(space), properties: { name } }] }),
  });

  it('changes the properties of existing instances', async () => {
    const res = await props('POST', '/models/instances', { items: [node('a', 'n-a', 'renamed')] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items[0]).toMatchObject({ externalId: 'n-a', wasModified: true });
    const read = await h.post('/models/instances/byids', { items: [{ instanceType: 'node', space: 'a', externalId: 'n-a' }], sources: [{ source: V('a') }] });
    expect(read.body.items[0].properties.a['Thing/1'].name).toBe('renamed');
  });

  it('refuses creating and deleting instances without WRITE where they are (403, nothing written)', async () => {
    const create = await props('POST', '/models/instances', { items: [node('a', 'n-a', 'again'), node('a', 'new-a', 'new')] });
    expect(errorMessage(create, 403)).toMatch(/items\[1\]\.space: creating the node "new-a" in the space "a" needs dataModelInstancesAcl:WRITE .*WRITE_PROPERTIES changes the properties of existing instances only/);
    const inApply = await props('POST', '/models/instances', { items: [node('a', 'n-a', 'again')], delete: [{ instanceType: 'node', space: 'a', externalId: 'n-a2' }] });
    expect(errorMessage(inApply, 403)).toMatch(/delete\[0\]\.space: deleting an instance in the space "a" needs dataModelInstancesAcl:WRITE/);
    const del = await props('POST', '/models/instances/delete', { items: [{ instanceType: 'node', space: 'a', externalId: 'n-a' }] });
    expect(errorMessage(del, 403)).toMatch(/dataModelInstancesAcl:WRITE/);
    const read = await h.post('/models/instances/byids', {
      items: ['n-a', 'new-a'].map((externalId) => ({ instanceType: 'node', space: 'a', externalId })),
      sources: [{ source: V('a') }],
    });
    expect(read.body.items.map((i: any) => [i.externalId, i.properties.a['Thing/1'].name])).toEqual([['n-a', 'renamed']]);
  });

  it('creates and deletes where WRITE is granted too', async () => {
    expect((await props('POST', '/models/instances', { items: [node('b', 'new-b', 'new')] })).status).toBe(200);
    expect((await props('POST', '/models/instances/delete', { items: [{ instanceType: 'node', space: 'b', externalId: 'new-b' }] })).body.items).toHaveLength(1);
  });
});
