/**
 * Write-protected data sets: creating, changing, moving in or out of, and deleting events, assets and time
 * series in one, inserting and deleting its series' data points, and changing the data set itself (or
 * protecting one) need `datasetsAcl:OWNER` on it, on top of the write capability; refused requests write
 * nothing. Items in data sets that are not protected are unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

const CLIENTS = [
  { clientId: 'writer', clientSecret: 'writer-secret', groups: ['writers'] },
  { clientId: 'owner', clientSecret: 'owner-secret', groups: ['writers', 'owners'] },
  { clientId: 'ds-owner', clientSecret: 'ds-owner-secret', groups: ['writers', 'ds-owners'] },
];

let h: Harness;
let locked: number;
let open: number;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  const sets = await h.post('/datasets', { items: [{ externalId: 'locked', writeProtected: true }, { externalId: 'open' }] });
  [locked, open] = sets.body.items.map((d: { id: number }) => d.id);
  await createGroup(h, {
    name: 'Writers',
    sourceId: 'writers',
    capabilities: ['eventsAcl', 'assetsAcl', 'timeSeriesAcl', 'datasetsAcl'].map((acl) => capability(acl, ['READ', 'WRITE'])),
  });
  await createGroup(h, { name: 'Owners', sourceId: 'owners', capabilities: [capability('datasetsAcl', ['OWNER'], { idscope: { ids: [locked] } })] });
  await createGroup(h, { name: 'Data set owners', sourceId: 'ds-owners', capabilities: [capability('datasetsAcl', ['OWNER'], { datasetScope: { ids: [locked] } })] });
  for (const c of CLIENTS) tokens[c.clientId] = await clientToken(h, c.clientId, c.clientSecret);
});
afterAll(() => h.close());

const as = (who: string, path: string, body: unknown): Promise<Response> => h.request('POST', path, body, bearer(tokens[who]));
const NEEDS_OWNER = (ds: number) => new RegExp(`which is write-protected; writing there needs datasetsAcl:OWNER on data set ${ds} \\(scope all, or idscope or datasetScope listing it\\)`);

const RESOURCES = [
  { path: '/events', noun: 'event', item: (externalId: string) => ({ externalId }) },
  { path: '/assets', noun: 'asset', item: (externalId: string) => ({ externalId, name: externalId }) },
  { path: '/timeseries', noun: 'time series', item: (externalId: string) => ({ externalId }) },
];

describe.each(RESOURCES)('$path in a write-protected data set', ({ path, noun, item }) => {
  const exists = async (externalId: string) => (await h.post(`${path}/byids`, { items: [{ externalId }], ignoreUnknownIds: true })).body.items[0];

  it('creates only with datasetsAcl:OWNER on it, and a refused request creates nothing', async () => {
    const refused = await as('writer', path, { items: [{ ...item(`${path}-open-1`), dataSetId: open }, { ...item(`${path}-locked-1`), dataSetId: locked }] });
    expect(errorMessage(refused, 403)).toMatch(new RegExp(`^items\\[1\\]: the new ${noun} is in data set ${locked}, which is write-protected`));
    expect(errorMessage(refused, 403)).toMatch(NEEDS_OWNER(locked));
    expect(await exists(`${path}-open-1`)).toBeUndefined();
    expect((await as('writer', path, { items: [{ ...item(`${path}-open-1`), dataSetId: open }] })).status).toBe(201);
    expect((await as('owner', path, { items: [{ ...item(`${path}-locked-1`), dataSetId: locked }] })).status).toBe(201);
    expect((await as('ds-owner', path, { items: [{ ...item(`${path}-locked-2`), dataSetId: locked }] })).status).toBe(201);
  });

  it('updates, moves in and moves out only with datasetsAcl:OWNER on it', async () => {
    const change = { update: { externalId: { set: `${path}-locked-1` } } };
    expect(errorMessage(await as('writer', `${path}/update`, { items: [{ externalId: `${path}-locked-1`, ...change }] }), 403)).toMatch(NEEDS_OWNER(locked));
    const moveIn = { externalId: `${path}-open-1`, update: { dataSetId: { set: locked } } };
    expect(errorMessage(await as('writer', `${path}/update`, { items: [moveIn] }), 403)).toMatch(/^items\[0\]\.update: .*which is write-protected/);
    const moveOut = { externalId: `${path}-locked-2`, update: { dataSetId: { set: open } } };
    expect(errorMessage(await as('writer', `${path}/update`, { items: [moveOut] }), 403)).toMatch(/^items\[0\]: .*which is write-protected/);
    expect(errorMessage(await as('writer', `${path}/update`, { items: [{ externalId: `${path}-locked-2`, update: { dataSetId: { setNull: true } } }] }), 403)).toMatch(
      NEEDS_OWNER(locked),
    );
    expect((await exists(`${path}-open-1`)).dataSetId).toBe(open);
    expect((await exists(`${path}-locked-2`)).dataSetId).toBe(locked);
    expect((await as('writer', `${path}/update`, { items: [{ externalId: `${path}-open-1`, update: { externalId: { set: `${path}-open-1` } } }] })).status).toBe(200);
    expect((await as('owner', `${path}/update`, { items: [moveIn] })).status).toBe(200);
    expect((await as('ds-owner', `${path}/update`, { items: [moveOut] })).status).toBe(200);
  });

  it('deletes only with datasetsAcl:OWNER on it', async () => {
    // Now in the protected data set: -locked-1 and -open-1 (moved in).
    expect(errorMessage(await as('writer', `${path}/delete`, { items: [{ externalId: `${path}-locked-1` }] }), 403)).toMatch(NEEDS_OWNER(locked));
    expect(await exists(`${path}-locked-1`)).toBeDefined();
    expect((await as('owner', `${path}/delete`, { items: [{ externalId: `${path}-locked-1` }] })).status).toBe(200);
    expect((await as('writer', `${path}/delete`, { items: [{ externalId: `${path}-locked-2` }] })).status).toBe(200);
  });
});

describe('data points of a series in a write-protected data set', () => {
  const T0 = Date.UTC(2024, 0, 1);
  const points = (externalId: string) => ({ items: [{ externalId, datapoints: [{ timestamp: T0, value: 1 }] }] });
  const remove = (externalId: string) => ({ items: [{ externalId, inclusiveBegin: T0, exclusiveEnd: T0 + 1 }] });
  const count = async (externalId: string) =>
    ((await h.post('/timeseries/data/list', { items: [{ externalId, start: T0, end: T0 + 1 }] })).body.items[0].datapoints as unknown[]).length;

  beforeAll(async () => {
    await h.post('/timeseries', { items: [{ externalId: 'dp-locked', dataSetId: locked }, { externalId: 'dp-open', dataSetId: open }] });
  });

  it('inserts and deletes only with datasetsAcl:OWNER on it', async () => {
    const refused = await as('writer', '/timeseries/data', { items: [{ externalId: 'dp-open', datapoints: [{ timestamp: T0, value: 1 }] }, ...points('dp-locked').items] });
    expect(errorMessage(refused, 403)).toMatch(new RegExp(`^items\\[1\\]: time series \\d+ is in data set ${locked}, which is write-protected`));
    expect(await count('dp-open')).toBe(0);
    expect((await as('writer', '/timeseries/data', points('dp-open'))).status).toBe(200);
    expect((await as('owner', '/timeseries/data', points('dp-locked'))).status).toBe(200);
    expect(errorMessage(await as('writer', '/timeseries/data/delete', remove('dp-locked')), 403)).toMatch(NEEDS_OWNER(locked));
    expect(await count('dp-locked')).toBe(1);
    expect((await as('writer', '/timeseries/data/delete', remove('dp-open'))).status).toBe(200);
    expect((await as('ds-owner', '/timeseries/data/delete', remove('dp-locked'))).status).toBe(200);
    expect(await count('dp-locked')).toBe(0);
  });
});

describe('the data set itself', () => {
  const refusal = (ds: number) => new RegExp(`changing data set ${ds}, which is or becomes write-protected, needs datasetsAcl:OWNER on it`);
  const get = async (id: number) => (await h.post('/datasets/byids', { items: [{ id }] })).body.items[0];

  it('is changed, protected and unprotected only by its owners', async () => {
    const [spare] = (await h.post('/datasets', { items: [{ externalId: 'spare' }] })).body.items;
    expect(errorMessage(await as('writer', '/datasets/update', { items: [{ id: locked, update: { name: { set: 'renamed' } } }] }), 403)).toMatch(refusal(locked));
    expect(errorMessage(await as('writer', '/datasets/update', { items: [{ id: locked, update: { writeProtected: { set: false } } }] }), 403)).toMatch(refusal(locked));
    const protect = await as('writer', '/datasets/update', { items: [{ id: spare.id, update: { writeProtected: { set: true } } }] });
    expect(errorMessage(protect, 403)).toMatch(/^items\[0\]\.update: /);
    expect(errorMessage(protect, 403)).toMatch(refusal(spare.id));
    expect(await get(locked)).toMatchObject({ writeProtected: true, externalId: 'locked' });
    expect((await get(spare.id)).writeProtected).toBe(false);
    expect((await as('writer', '/datasets/update', { items: [{ id: spare.id, update: { name: { set: 'spare' } } }] })).status).toBe(200);
    expect((await as('owner', '/datasets/update', { items: [{ id: locked, update: { name: { set: 'Locked' } } }] })).status).toBe(200);
  });

  it('is created write-protected with datasetsAcl:WRITE alone: nothing is in it yet', async () => {
    const res = await as('writer', '/datasets', { items: [{ externalId: 'new-locked', writeProtected: true }] });
    expect(res.status).toBe(200);
    expect(errorMessage(await as('writer', '/events', { items: [{ dataSetId: res.body.items[0].id }] }), 403)).toMatch(NEEDS_OWNER(res.body.items[0].id));
  });

  it('filters by writeProtected', async () => {
    const listed = await h.post('/datasets/list', { filter: { writeProtected: true } });
    expect(listed.body.items.map((d: { externalId: string }) => d.externalId).sort()).toEqual(['locked', 'new-locked']);
  });
});

describe('recursive asset deletion', () => {
  it('refuses a subtree reaching into a write-protected data set, and deletes nothing', async () => {
    await h.post('/assets', {
      items: [
        { externalId: 'tree-root', name: 'root', dataSetId: open },
        { externalId: 'tree-child', name: 'child', parentExternalId: 'tree-root', dataSetId: locked },
      ],
    });
    const res = await as('writer', '/assets/delete', { items: [{ externalId: 'tree-root' }], recursive: true });
    expect(errorMessage(res, 403)).toMatch(/asset \d+ is in data set \d+, which is write-protected/);
    expect((await h.post('/assets/byids', { items: [{ externalId: 'tree-root' }, { externalId: 'tree-child' }] })).body.items).toHaveLength(2);
    expect((await as('owner', '/assets/delete', { items: [{ externalId: 'tree-root' }], recursive: true })).status).toBe(200);
  });
});
