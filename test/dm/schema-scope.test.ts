/**
 * Data modeling schema under a space scope. A principal granted `dataModelsAcl` and `dataModelInstancesAcl`
 * in space `alpha` sees the schema of project "dev", where views in `alpha` implement a view of the space
 * `secret`, map one of its containers and go through it, exactly as an administrator sees project "other",
 * which was built the same way and then had everything in `secret` deleted. It sees the system spaces
 * (the core data model) as every principal does. And every request that names a hidden view, container or
 * property answers as it does for one that does not exist: the same status and message, apart from the name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from '../support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from '../support/harness.js';

let h: Harness;
const tokens: Record<string, string> = {};
const CLIENTS = ['scoped', 'instances-only', 'system-only'].map((c) => ({ clientId: c, clientSecret: `${c}-secret`, groups: [c] }));

const C = (space: string, externalId: string) => ({ type: 'container', space, externalId });
const V = (space: string, externalId: string) => ({ type: 'view', space, externalId, version: '1' });
const SECRET_C = C('secret', 'SecretC');
const SECRET_V = V('secret', 'SecretV');
const PUB = V('alpha', 'Pub');
const PLAIN = V('alpha', 'Plain');
/** A hidden view of a visible container. */
const SPY = V('secret', 'Spy');
const ALPHA_C = C('alpha', 'AlphaC');
/** A reference without its type tag, as by-ids and delete requests name views and containers. */
const id = <T extends { type: string }>({ type: _type, ...rest }: T): Omit<T, 'type'> => rest;
const node = (externalId: string, sources: unknown[]) => ({ instanceType: 'node', space: 'alpha', externalId, sources });

/** The definitions both projects get, in order, and the deletions that leave project "other" with `alpha` alone. */
const SETUP: Array<[string, unknown]> = [
  ['/models/spaces', { items: [{ space: 'alpha' }, { space: 'secret' }] }],
  [
    '/models/containers',
    {
      items: [
        { space: 'secret', externalId: 'SecretC', properties: { hiddenCode: { type: { type: 'text' } }, hiddenN: { type: { type: 'int64' } }, hiddenRel: { type: { type: 'direct' } } } },
        { space: 'alpha', externalId: 'AlphaC', properties: { name: { type: { type: 'text' } }, ref: { type: { type: 'direct' } } } },
        { space: 'alpha', externalId: 'Base', properties: { x: { type: { type: 'text' } } } },
        { space: 'secret', externalId: 'Needs', properties: { y: { type: { type: 'text' } } }, constraints: { needsBase: { constraintType: 'requires', require: C('alpha', 'Base') } } },
      ],
    },
  ],
  [
    '/models/views',
    {
      items: [
        {
          ...SECRET_V,
          properties: {
            hiddenCode: { container: SECRET_C, containerPropertyIdentifier: 'hiddenCode' },
            hiddenRel: { container: SECRET_C, containerPropertyIdentifier: 'hiddenRel' },
          },
        },
        {
          ...PUB,
          implements: [SECRET_V],
          properties: {
            name: { container: ALPHA_C, containerPropertyIdentifier: 'name' },
            hiddenN: { container: SECRET_C, containerPropertyIdentifier: 'hiddenN' },
            back: { connectionType: 'multi_reverse_direct_relation', source: PUB, through: { source: SECRET_V, identifier: 'hiddenRel' } },
            linked: { connectionType: 'multi_edge_connection', type: { space: 'alpha', externalId: 'link' }, source: SECRET_V, direction: 'outwards' },
          },
        },
        { ...PLAIN, properties: { name: { container: ALPHA_C, containerPropertyIdentifier: 'name' } } },
        { ...SPY, properties: { name: { container: ALPHA_C, containerPropertyIdentifier: 'name' } } },
      ].map(id),
    },
  ],
  ['/models/datamodels', { items: [{ space: 'alpha', externalId: 'Model', version: '1', views: [PUB, SECRET_V, PLAIN] }] }],
  [
    '/models/instances',
    {
      items: [
        node('n1', [
          { source: ALPHA_C, properties: { name: 'one' } },
          { source: SECRET_C, properties: { hiddenCode: 'TOP', hiddenN: 7 } },
        ]),
        node('n2', [{ source: ALPHA_C, properties: { name: 'two' } }]),
      ],
    },
  ],
];
const ALONE: Array<[string, unknown]> = [
  ['/models/views/delete', { items: [SECRET_V, SPY].map(id) }],
  ['/models/containers/delete', { items: [SECRET_C, C('secret', 'Needs')].map(id) }],
  ['/models/spaces/delete', { items: [{ space: 'secret' }] }],
];

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  for (const [project, steps] of [
    ['dev', SETUP],
    ['other', [...SETUP, ...ALONE]],
  ] as const) {
    for (const [path, body] of steps) {
      const res = await h.request('POST', `/api/v1/projects/${project}${path}`, body);
      expect(res.status, `${project} ${path}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  }
  const alpha = { spaceIdScope: { spaceIds: ['alpha'] } };
  await createGroup(h, {
    name: 'Alpha',
    sourceId: 'scoped',
    capabilities: [capability('dataModelsAcl', ['READ', 'WRITE'], alpha), capability('dataModelInstancesAcl', ['READ', 'WRITE'], alpha)],
  });
  await createGroup(h, { name: 'Alpha instances', sourceId: 'instances-only', capabilities: [capability('dataModelInstancesAcl', ['READ'], alpha)] });
  await createGroup(h, {
    name: 'Another space',
    sourceId: 'system-only',
    capabilities: [capability('dataModelsAcl', ['READ'], { spaceIdScope: { spaceIds: ['nowhere'] } }), capability('dataModelInstancesAcl', ['READ'], alpha)],
  });
  for (const c of CLIENTS) tokens[c.clientId] = await clientToken(h, c.clientId, c.clientSecret);
});
afterAll(() => h?.close());

const as = (who: string, method: string, path: string, body?: unknown) => h.request(method, path, body, bearer(tokens[who]));

/** An answer without what differs between two projects built alike: times and cursors. */
function comparable(res: Response): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !['createdTime', 'lastUpdatedTime', 'nextCursor'].includes(k))
        .map(([k, x]) => [k, walk(x)]),
    );
  };
  return { status: res.status, body: walk(res.body) };
}

/** The scoped principal's answer in "dev" is the administrator's in "other". */
async function sameAsAlone(method: string, path: string, body?: unknown): Promise<Response> {
  const scoped = await as('scoped', method, path, body);
  const alone = await h.request(method, `/api/v1/projects/other${path}`, body);
  expect(comparable(scoped), `${method} ${path} ${JSON.stringify(body)}`).toEqual(comparable(alone));
  return scoped;
}

describe('schema that draws on hidden spaces', () => {
  it('reads a view as if what it implements, maps and goes through in hidden spaces did not exist', async () => {
    const res = await sameAsAlone('POST', '/models/views/byids', { items: [PUB, PLAIN, SECRET_V].map(id) });
    expect(res.body.items.map((v: any) => v.externalId)).toEqual(['Pub', 'Plain']);
    const pub = res.body.items[0];
    expect(Object.keys(pub.properties).sort()).toEqual(['back', 'linked', 'name']);
    expect(pub.mappedContainers).toEqual([ALPHA_C]);
    expect(pub.properties.back.targetsList).toBe(false);
    // Its own definition names what it was written against, as after that was deleted.
    expect(pub.implements).toEqual([SECRET_V]);
    const all = await h.post('/models/views/byids', { items: [id(PUB)] });
    expect(Object.keys(all.body.items[0].properties).sort()).toEqual(['back', 'hiddenCode', 'hiddenN', 'hiddenRel', 'linked', 'name']);

    await sameAsAlone('POST', '/models/views/byids', { items: [id(PUB)], includeInheritedProperties: false });
    await sameAsAlone('GET', '/models/views?space=alpha');
    await sameAsAlone('GET', '/models/views?space=alpha&allVersions=true&includeInheritedProperties=false');
  });

  it('inlines in data models only the views it sees, resolved as it sees them', async () => {
    const res = await sameAsAlone('POST', '/models/datamodels/byids?inlineViews=true', { items: [{ space: 'alpha', externalId: 'Model', version: '1' }] });
    expect(res.body.items[0].views.map((v: any) => v.externalId)).toEqual(['Pub', 'Plain']);
    await sameAsAlone('POST', '/models/datamodels/byids', { items: [{ space: 'alpha', externalId: 'Model' }] });
    await sameAsAlone('GET', '/models/datamodels?space=alpha&inlineViews=true');
  });

  it('counts in container inspection only the views it sees', async () => {
    const body = { items: [ALPHA_C, C('alpha', 'Base')].map(id), inspectionOperations: { involvedViews: {}, totalInvolvedViewCount: {} } };
    const res = await sameAsAlone('POST', '/models/containers/inspect', body);
    const { involvedViews, involvedViewCount } = res.body.items[0].inspectionResults;
    expect([involvedViews.map((v: any) => v.externalId).sort(), involvedViewCount]).toEqual([['Plain', 'Pub'], 2]);
  });

  it('types and reads instances only through what it sees', async () => {
    const list = await sameAsAlone('POST', '/models/instances/list', { sources: [{ source: PUB }], includeTyping: true, sort: [{ property: ['node', 'externalId'] }] });
    expect(list.body.items[0].properties).toEqual({ alpha: { 'Pub/1': { name: 'one' } } });
    expect(Object.keys(list.body.typing.alpha['Pub/1'])).toEqual(['name']);
    const ids = [{ instanceType: 'node', space: 'alpha', externalId: 'n1' }];
    await sameAsAlone('POST', '/models/instances/byids', { items: ids, sources: [{ source: PUB }, { source: PLAIN }], includeTyping: true });
    await sameAsAlone('POST', '/models/instances/search', { view: PUB, query: 'one' });
    await sameAsAlone('POST', '/models/instances/aggregate', { view: PUB, aggregates: [{ count: { property: 'name' } }], groupBy: ['name'] });
    await sameAsAlone('POST', '/models/instances/query', {
      with: { n: { nodes: { filter: { hasData: [PUB] } } } },
      select: { n: { sources: [{ source: PUB, properties: ['*'] }] } },
      includeTyping: true,
    });
    await sameAsAlone('POST', '/models/instances/sync', { with: { n: { nodes: { filter: { hasData: [PUB] } } } }, select: { n: { sources: [{ source: PUB, properties: ['*'] }] } } });
    const inspect = await sameAsAlone('POST', '/models/instances/inspect', { items: ids, inspectionOperations: { involvedViews: {}, involvedContainers: {} } });
    const results = inspect.body.items[0].inspectionResults;
    expect([results.involvedContainers, results.involvedViews.map((v: any) => v.externalId).sort()]).toEqual([[ALPHA_C], ['Plain', 'Pub']]);
  });

  it('refuses to delete a container a hidden container requires, without naming it', async () => {
    const res = await as('scoped', 'POST', '/models/containers/delete', { items: [{ space: 'alpha', externalId: 'Base' }] });
    const message = errorMessage(res, 400);
    expect(message).toMatch(/items\[0\]: the container alpha:Base is required by a constraint of a container in a space this principal cannot see/);
    expect(message).not.toMatch(/secret|Needs|needsBase/);
    expect((await h.post('/models/containers/byids', { items: [{ space: 'alpha', externalId: 'Base' }] })).body.items).toHaveLength(1);
  });
});

describe('the system spaces', () => {
  const CORE = { space: 'cdf_cdm', externalId: 'CogniteCore', version: 'v1' };
  const ASSET = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };

  it('are read by every principal that reads data modeling, as by one that sees every space', async () => {
    for (const who of ['scoped', 'system-only']) {
      const same = async (method: string, path: string, body?: unknown) => {
        const res = await as(who, method, path, body);
        expect(comparable(res), `${who} ${path}`).toEqual(comparable(await h.request(method, path, body)));
        return res;
      };
      const spaces = await same('POST', '/models/spaces/byids', { items: [{ space: 'cdf_cdm' }, { space: 'cdf_cdm_units' }, { space: 'cdf_cdm_3d' }] });
      expect(spaces.body.items).toHaveLength(3);
      expect((await same('POST', '/models/views/byids', { items: [id(ASSET)] })).body.items).toHaveLength(1);
      expect((await same('POST', '/models/containers/byids', { items: [{ space: 'cdf_cdm', externalId: 'CogniteDescribable' }] })).body.items).toHaveLength(1);
      expect((await same('POST', '/models/datamodels/byids?inlineViews=true', { items: [CORE] })).body.items[0].views.length).toBeGreaterThan(30);
      for (const kind of ['views', 'containers', 'datamodels']) await same('GET', `/models/${kind}?space=cdf_cdm&includeGlobal=true&limit=1000`);
      const listed = await as(who, 'GET', '/models/spaces?includeGlobal=true&limit=1000');
      expect(listed.body.items.map((s: any) => s.space).filter((s: string) => s.startsWith('cdf_')).sort()).toEqual(['cdf_cdm', 'cdf_cdm_3d', 'cdf_cdm_units', 'cdf_core', 'cdf_extraction_extensions']);
    }
  });

  it('are named in instance requests by principals without dataModelsAcl, who see no other schema', async () => {
    const res = await as('instances-only', 'POST', '/models/instances/list', { sources: [{ source: ASSET }], includeTyping: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Object.keys(res.body.typing.cdf_cdm['CogniteAsset/v1'])).toContain('name');
    expect(errorMessage(await as('instances-only', 'POST', '/models/instances/list', { sources: [{ source: PLAIN }] }), 400)).toBe('One or more views do not exist: alpha:Plain/1');
  });
});

/**
 * Requests that name a view, container or property. Each is sent naming a hidden one and naming one that
 * does not exist; the answers must agree once the name is replaced.
 */
type ViewRef = ReturnType<typeof V>;
type ContainerRef = ReturnType<typeof C>;
const VIEW_REQUESTS: Array<[string, (v: ViewRef) => unknown]> = [
  ['/models/views/byids', (v) => ({ items: [id(v)] })],
  ['/models/instances/list', (v) => ({ sources: [{ source: v }] })],
  ['/models/instances/list', (v) => ({ filter: { hasData: [v] } })],
  ['/models/instances/list', (v) => ({ filter: { exists: { property: [v.space, `${v.externalId}/${v.version}`, 'hiddenCode'] } } })],
  ['/models/instances/list', (v) => ({ sort: [{ property: [v.space, `${v.externalId}/${v.version}`, 'hiddenCode'] }] })],
  ['/models/instances/byids', (v) => ({ items: [{ instanceType: 'node', space: 'alpha', externalId: 'n1' }], sources: [{ source: v }], includeTyping: true })],
  ['/models/instances/search', (v) => ({ view: v })],
  ['/models/instances/aggregate', (v) => ({ view: v, aggregates: [{ count: { property: 'hiddenCode' } }] })],
  ['/models/instances/query', (v) => ({ with: { n: { nodes: {} } }, select: { n: { sources: [{ source: v, properties: ['*'] }] } } })],
  ['/models/instances/query', (v) => ({ with: { n: { nodes: { filter: { hasData: [v] } } } }, select: { n: {} } })],
  ['/models/instances/query', (v) => ({ with: { n: { nodes: {} }, m: { nodes: { from: 'n', through: { source: v, identifier: 'hiddenRel' } } } }, select: { m: {} } })],
  ['/models/instances/sync', (v) => ({ with: { n: { nodes: { filter: { hasData: [v] } } } }, select: { n: { sources: [{ source: v, properties: ['*'] }] } } })],
  ['/models/instances', (v) => ({ items: [node('n9', [{ source: v, properties: { hiddenCode: 'x' } }])] })],
  ['/models/views', (v) => ({ items: [{ space: 'alpha', externalId: 'Probe', version: '1', implements: [v] }] })],
  [
    '/models/views',
    (v) => ({
      items: [{ space: 'alpha', externalId: 'Probe', version: '1', properties: { back: { connectionType: 'multi_reverse_direct_relation', source: PLAIN, through: { source: v, identifier: 'hiddenRel' } } } }],
    }),
  ],
  ['/models/datamodels', (v) => ({ items: [{ space: 'alpha', externalId: 'Probe', version: '1', views: [v] }] })],
];

const CONTAINER_REQUESTS: Array<[string, (c: ContainerRef) => unknown]> = [
  ['/models/containers/byids', (c) => ({ items: [{ space: c.space, externalId: c.externalId }] })],
  ['/models/containers/inspect', (c) => ({ items: [{ space: c.space, externalId: c.externalId }], inspectionOperations: { involvedViews: {} } })],
  ['/models/instances/list', (c) => ({ filter: { hasData: [c] } })],
  ['/models/instances/list', (c) => ({ filter: { prefix: { property: [c.space, c.externalId, 'hiddenCode'], value: 'T' } } })],
  ['/models/instances/list', (c) => ({ sort: [{ property: [c.space, c.externalId, 'hiddenCode'] }] })],
  ['/models/instances/aggregate', (c) => ({ view: PUB, filter: { exists: { property: [c.space, c.externalId, 'hiddenN'] } } })],
  ['/models/instances/query', (c) => ({ with: { n: { nodes: { filter: { hasData: [c] } } } }, select: { n: {} } })],
  ['/models/instances/query', (c) => ({ with: { n: { nodes: {} }, m: { nodes: { from: 'n', through: { source: c, identifier: 'hiddenRel' } } } }, select: { m: {} } })],
  ['/models/instances/sync', (c) => ({ with: { n: { nodes: { filter: { exists: { property: [c.space, c.externalId, 'hiddenCode'] } } } } }, select: { n: {} } })],
  ['/models/instances', (c) => ({ items: [node('n9', [{ source: c, properties: { hiddenCode: 'x' } }])] })],
  ['/models/views', (c) => ({ items: [{ space: 'alpha', externalId: 'Probe', version: '1', properties: { p: { container: c, containerPropertyIdentifier: 'hiddenCode' } } }] })],
  ['/models/containers', (c) => ({ items: [{ space: 'alpha', externalId: 'Probe', properties: { x: { type: { type: 'text' } } }, constraints: { r: { constraintType: 'requires', require: c } } }] })],
  ['/models/containers', (c) => ({ items: [{ space: 'alpha', externalId: 'Probe', properties: { d: { type: { type: 'direct', container: c } } } }] })],
];

/** Requests that name a property of a visible view: one it has from hidden schema, or one it does not have. */
const PROPERTY_REQUESTS: Array<[string, (p: string) => unknown]> = [
  ['/models/instances/list', (p) => ({ filter: { exists: { property: ['alpha', 'Pub/1', p] } } })],
  ['/models/instances/list', (p) => ({ sources: [{ source: PUB }], sort: [{ property: ['alpha', 'Pub/1', p] }] })],
  ['/models/instances/list', (p) => ({ sources: [{ source: PUB, targetUnits: [{ property: p, unit: { externalId: 'temperature:deg_c' } }] }] })],
  ['/models/instances/search', (p) => ({ view: PUB, query: 'TOP', properties: [p] })],
  ['/models/instances/search', (p) => ({ view: PUB, filter: { prefix: { property: [p], value: 'T' } } })],
  ['/models/instances/aggregate', (p) => ({ view: PUB, groupBy: [p], aggregates: [{ count: { property: p } }] })],
  ['/models/instances/aggregate', (p) => ({ view: PUB, aggregates: [{ max: { property: p } }] })],
  ['/models/instances/query', (p) => ({ with: { n: { nodes: {} } }, select: { n: { sources: [{ source: PUB, properties: [p] }], sort: [{ property: ['alpha', 'Pub/1', p] }] } } })],
  ['/models/instances/query', (p) => ({ with: { n: { nodes: {} }, m: { nodes: { from: 'n', through: { view: PUB, identifier: p } } } }, select: { m: {} } })],
  ['/models/instances', (p) => ({ items: [node('n1', [{ source: PUB, properties: { [p]: 'x' } }])] })],
  ['/models/views', (p) => ({ items: [{ space: 'alpha', externalId: 'Probe', version: '1', properties: { back: { connectionType: 'multi_reverse_direct_relation', source: PLAIN, through: { source: PUB, identifier: p } } } }] })],
];

/** Sends `request(hidden)` and `request(absent)` as the scoped principal: the same status and message once the names are replaced. */
async function indistinguishable<T>(path: string, request: (x: T) => unknown, hidden: T, absent: T, names: Array<[string, string]>): Promise<void> {
  const [a, b] = [await as('scoped', 'POST', path, request(hidden)), await as('scoped', 'POST', path, request(absent))];
  const rename = (res: Response) => {
    let text = JSON.stringify(res.body);
    for (const [n, m] of names) text = text.replaceAll(n, m);
    return { status: res.status, body: JSON.parse(text) };
  };
  const where = `${path} ${JSON.stringify(request(hidden))}`;
  expect(rename(a), where).toEqual(rename(b));
}

describe('hidden and absent schema answer alike', () => {
  it('for views, named by every operation that takes one', async () => {
    for (const absent of [V('secret', 'AbsentV'), V('nospace', 'AbsentV')]) {
      for (const [path, request] of VIEW_REQUESTS) {
        await indistinguishable(path, request, SECRET_V, absent, [
          ['SecretV', 'NAME'],
          ['AbsentV', 'NAME'],
          ['nospace', 'secret'],
        ]);
      }
    }
    // A hidden view is refused, not read.
    expect(errorMessage(await as('scoped', 'POST', '/models/instances/list', { sources: [{ source: SECRET_V }] }), 400)).toBe('One or more views do not exist: secret:SecretV/1');
  });

  it('for containers, named by every operation that takes one', async () => {
    for (const absent of [C('secret', 'AbsentC'), C('nospace', 'AbsentC')]) {
      for (const [path, request] of CONTAINER_REQUESTS) {
        await indistinguishable(path, request, SECRET_C, absent, [
          ['SecretC', 'NAME'],
          ['AbsentC', 'NAME'],
          ['nospace', 'secret'],
        ]);
      }
    }
    expect(errorMessage(await as('scoped', 'POST', '/models/instances/list', { filter: { hasData: [SECRET_C] } }), 400)).toBe('One or more containers do not exist: secret:SecretC');
  });

  it('for properties a visible view has from hidden schema', async () => {
    for (const hidden of ['hiddenCode', 'hiddenN', 'hiddenRel']) {
      for (const [path, request] of PROPERTY_REQUESTS) {
        await indistinguishable(path, request, hidden, 'absentProp', [
          [hidden, 'NAME'],
          ['absentProp', 'NAME'],
        ]);
      }
    }
  });

  it('for writes into a hidden space and into one that does not exist (403, naming only the request\'s space)', async () => {
    const requests: Array<[string, (space: string) => unknown]> = [
      ['/models/spaces', (space) => ({ items: [{ space }] })],
      ['/models/spaces/delete', (space) => ({ items: [{ space }] })],
      ['/models/containers', (space) => ({ items: [{ space, externalId: 'SecretC', properties: { x: { type: { type: 'text' } } } }] })],
      ['/models/containers/delete', (space) => ({ items: [{ space, externalId: 'SecretC' }] })],
      ['/models/containers/indexes/delete', (space) => ({ items: [{ space, containerExternalId: 'SecretC', identifier: 'i' }] })],
      ['/models/containers/constraints/retry', (space) => ({ items: [{ space, containerExternalId: 'SecretC', identifier: 'i' }] })],
      ['/models/views', (space) => ({ items: [{ space, externalId: 'SecretV', version: '1' }] })],
      ['/models/views/delete', (space) => ({ items: [{ space, externalId: 'SecretV', version: '1' }] })],
      ['/models/datamodels', (space) => ({ items: [{ space, externalId: 'M', version: '1' }] })],
      ['/models/datamodels/delete', (space) => ({ items: [{ space, externalId: 'M', version: '1' }] })],
      ['/models/instances', (space) => ({ items: [{ instanceType: 'node', space, externalId: 'n1', sources: [{ source: PLAIN, properties: { name: 'x' } }] }] })],
      ['/models/instances/delete', (space) => ({ items: [{ instanceType: 'node', space, externalId: 'n1' }] })],
    ];
    for (const [path, request] of requests) {
      expect((await as('scoped', 'POST', path, request('secret'))).status, path).toBe(403);
      await indistinguishable(path, request, 'secret', 'nospace', [['nospace', 'secret']]);
    }
  });

  it('for spaces read by id', async () => {
    const requests: Array<[string, (space: string) => unknown]> = [
      ['/models/spaces/byids', (space) => ({ items: [{ space }] })],
      ['/models/statistics/spaces/byids', (space) => ({ items: [{ space }] })],
      ['/models/views/byids', (space) => ({ items: [{ space, externalId: 'SecretV' }] })],
      ['/models/datamodels/byids', (space) => ({ items: [{ space, externalId: 'Model' }] })],
    ];
    for (const [path, request] of requests) await indistinguishable(path, request, 'secret', 'nospace', [['nospace', 'secret']]);
  });
});
