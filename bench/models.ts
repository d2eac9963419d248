/**
 * Data modeling workloads: ingest of nodes through one view of 10 properties, 1000 per request;
 * a list filtered on an indexed property and sorted on another (limit 1000); and the cost of a deep page
 * against the first (keyset cursors); a two-hop query over as many edges as nodes; a sync chain over every
 * node; on whichever store the server child uses (SQLite, or PostgreSQL when
 * BENCH_BACKEND=postgres).
 *
 * Environment:
 *   BENCH_MODELS_NODES     nodes to ingest (default 100000; a multiple of 1000)
 *   BENCH_MODELS_REQUESTS  timed requests per query after warm-up (default 50)
 *
 * Then the longest requests the limits allow, each with GETs of one event sent one after another while it
 * runs: histograms over every node (10,000 buckets each, five of them), a query of 100,000 instances, an
 * apply of 100 containers of 100 properties and 10 indexes each, a search every node matches, and an index
 * and a uniqueness constraint added to the container of every node (until they are built, after the
 * apply). The figure is how long the slowest GET waited: the server answers others while it works.
 *
 * Last, the cost of the schema a request reads: a by-ids read of one node through the bench's view, before
 * and after the core data model (29 containers, 33 views) is put into the project, which a process that kept
 * no schema between requests would read and resolve at each request.
 */
import { coreModelRequests } from '../src/resources/models/core-model.js';
import { DM_LIMITS } from '../src/resources/models/limits.js';
import type { BenchContext, Suite } from './lib/context.js';
import { intEnv } from './lib/env.js';
import type { HttpResponse } from './lib/http.js';
import { sequential } from './lib/load.js';
import { fmtInt, fmtMs, fmtRatio, now, summarize } from './lib/stats.js';

const BATCH = 1000;
const WARMUP = 10;
const CATEGORIES = 20;
const PAGE_SIZE = 100;
const DEEP_PAGE = 100;

function ok(res: HttpResponse, what: string): any {
  if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status}: ${res.body.toString('utf8').slice(0, 500)}`);
  return JSON.parse(res.body.toString('utf8'));
}

// A space of its own per run, so a reused BENCH_DATA_DIR or database ingests new nodes rather than re-applying old ones.
const SPACE = `bench-${Date.now().toString(36)}`;
const container = { type: 'container', space: SPACE, externalId: 'Equipment' } as const;
const view = { type: 'view', space: SPACE, externalId: 'Equipment', version: 'v1' } as const;

const PROPERTIES: Record<string, { type: Record<string, unknown>; nullable?: boolean }> = {
  name: { type: { type: 'text' } },
  category: { type: { type: 'text' } },
  serial: { type: { type: 'int64' }, nullable: false },
  value: { type: { type: 'float64' } },
  active: { type: { type: 'boolean' } },
  installed: { type: { type: 'timestamp' } },
  tags: { type: { type: 'text', list: true } },
  level: { type: { type: 'int32' } },
  weight: { type: { type: 'float64' } },
  note: { type: { type: 'text' } },
};

function node(i: number) {
  return {
    instanceType: 'node',
    space: SPACE,
    externalId: `eq-${i}`,
    sources: [
      {
        source: view,
        properties: {
          name: `Equipment ${i}`,
          category: `cat-${i % CATEGORIES}`,
          serial: i,
          value: (i % 1000) / 10,
          active: i % 2 === 0,
          installed: new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString(),
          tags: [`t${i % 7}`, `t${i % 11}`],
          level: i % 100,
          weight: i * 0.5,
          note: `note for equipment number ${i}`,
        },
      },
    ],
  };
}

export const modelsSuite: Suite = {
  name: 'models',
  async run(ctx) {
    const nodes = Math.ceil(intEnv('BENCH_MODELS_NODES', 100_000, BATCH) / BATCH) * BATCH;
    const requests = intEnv('BENCH_MODELS_REQUESTS', 50, 5);
    const engine = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite';

    ok(await ctx.call('POST', '/models/spaces', { items: [{ space: SPACE }] }), 'POST /models/spaces');
    ok(
      await ctx.call('POST', '/models/containers', {
        items: [
          {
            ...container,
            type: undefined,
            properties: PROPERTIES,
            indexes: { byCategory: { properties: ['category'] }, bySerial: { properties: ['serial'], cursorable: true } },
          },
        ],
      }),
      'POST /models/containers',
    );
    const viewProperties = Object.fromEntries(Object.keys(PROPERTIES).map((p) => [p, { container, containerPropertyIdentifier: p }]));
    ok(await ctx.call('POST', '/models/views', { items: [{ space: SPACE, externalId: 'Equipment', version: 'v1', properties: viewProperties }] }), 'POST /models/views');

    ctx.log(`models: ingesting ${fmtInt(nodes)} nodes, ${BATCH} per request (${engine})`);
    const t0 = now();
    const perRequest: number[] = [];
    await ctx.profiled(`models-ingest-${engine}`, async () => {
      for (let at = 0; at < nodes; at += BATCH) {
        const body = { items: Array.from({ length: BATCH }, (_, k) => node(at + k)) };
        const t = now();
        ok(await ctx.call('POST', '/models/instances', body), 'POST /models/instances');
        perRequest.push(now() - t);
      }
    });
    const seconds = (now() - t0) / 1000;
    const rate = nodes / seconds;
    // Whether a request costs more as the store grows: the median request of the first and the last tenth.
    const tenth = Math.max(1, Math.floor(perRequest.length / 10));
    const firstTenth = summarize(perRequest.slice(0, tenth)).p50;
    const lastTenth = summarize(perRequest.slice(-tenth)).p50;
    ctx.note(`DM ingest (${engine}): median request ${fmtMs(firstTenth)} over the first tenth of the nodes, ${fmtMs(lastTenth)} over the last.`);
    ctx.report({
      id: `models.ingest.${engine}`,
      workload: `DM ingest (${engine}): ${fmtInt(nodes)} nodes, 10 properties, ${BATCH}/request`,
      value: `${fmtInt(rate)} nodes/s`,
      target: engine === 'SQLite' ? '≥ 5,000 nodes/s' : undefined,
      met: engine === 'SQLite' ? rate >= 5000 : undefined,
      data: { nodes, seconds, rate, firstTenthMs: firstTenth, lastTenthMs: lastTenth },
    });

    const filtered = {
      sources: [{ source: view }],
      filter: { equals: { property: [SPACE, 'Equipment/v1', 'category'], value: 'cat-3' } },
      sort: [{ property: [SPACE, 'Equipment/v1', 'serial'] }],
      limit: 1000,
    };
    const first = ok(await ctx.call('POST', '/models/instances/list', filtered), 'filtered list');
    if (first.items.length !== Math.min(1000, nodes / CATEGORIES)) throw new Error(`filtered list: ${first.items.length} items`);
    await sequential(WARMUP, async () => void ok(await ctx.call('POST', '/models/instances/list', filtered), 'filtered list'));
    const lat = summarize(
      await ctx.profiled(`models-list-${engine}`, () => sequential(requests, async () => void ok(await ctx.call('POST', '/models/instances/list', filtered), 'filtered list'))),
    );
    // Reference: a bare Fastify route answering the same bytes, timed the same way, so the HTTP and load
    // generator share of the figure is known on a busy machine.
    const bytes = (await ctx.call('POST', '/models/instances/list', filtered)).body.toString('utf8');
    await ctx.server.command({ type: 'bare', payload: bytes });
    const bare = async (i: number) => {
      const res = await ctx.client.request('GET', `${ctx.server.bareOrigin}/bare/${i}`, undefined, { authorization: 'Bearer x' });
      if (res.status !== 200) throw new Error(`bare route: HTTP ${res.status}`);
    };
    await sequential(WARMUP, bare);
    const ref = summarize(await sequential(requests, bare));
    ctx.report({
      id: `models.list.filterSort.${engine}`,
      workload: `DM list (${engine}): equals on an indexed property, sorted by another, limit 1000`,
      value: `p50 ${fmtMs(lat.p50)}, p90 ${fmtMs(lat.p90)}`,
      reference: `bare route, same ${fmtInt(bytes.length)} bytes: p50 ${fmtMs(ref.p50)}`,
      ratio: `${fmtRatio(lat.p50 / ref.p50)} of bare`,
      target: 'p50 ≤ 20 ms',
      met: lat.p50 <= 20,
      data: { ...lat, bare: ref },
    });

    // Page 1 and page 100 of the same sorted list (100 per page).
    const paged = { sources: [{ source: view }], sort: [{ property: [SPACE, 'Equipment/v1', 'serial'] }], limit: PAGE_SIZE };
    let cursor: string | undefined;
    for (let p = 1; p < DEEP_PAGE; p++) {
      const page = ok(await ctx.call('POST', '/models/instances/list', { ...paged, cursor }), 'paging');
      cursor = page.nextCursor;
      if (!cursor) throw new Error(`paging: no cursor after page ${p}`);
    }
    const deep = { ...paged, cursor };
    const deepFirst = ok(await ctx.call('POST', '/models/instances/list', deep), 'deep page');
    if (deepFirst.items[0]?.properties?.[SPACE]?.['Equipment/v1']?.serial !== (DEEP_PAGE - 1) * PAGE_SIZE) throw new Error('deep page: wrong first item');
    await sequential(WARMUP, async () => {
      ok(await ctx.call('POST', '/models/instances/list', paged), 'page 1');
      ok(await ctx.call('POST', '/models/instances/list', deep), 'page 100');
    });
    const p1: number[] = [];
    const p100: number[] = [];
    for (let i = 0; i < requests; i++) {
      let t = now();
      ok(await ctx.call('POST', '/models/instances/list', paged), 'page 1');
      p1.push(now() - t);
      t = now();
      ok(await ctx.call('POST', '/models/instances/list', deep), 'page 100');
      p100.push(now() - t);
    }
    const s1 = summarize(p1);
    const s100 = summarize(p100);
    const ratio = s100.p50 / s1.p50;
    ctx.report({
      id: `models.list.deepPage.${engine}`,
      workload: `DM list (${engine}): page ${DEEP_PAGE} against page 1 (${PAGE_SIZE} per page, sorted)`,
      value: `p50 ${fmtMs(s100.p50)}`,
      reference: `page 1 p50 ${fmtMs(s1.p50)}`,
      ratio: `${fmtRatio(ratio)} of page 1`,
      target: '≤ 1.5× of page 1',
      met: ratio <= 1.5,
      data: { page1: s1, page100: s100, ratio },
    });

    // A two-hop query: equipment of one category (an indexed property), the edges leaving each, and the
    // equipment at their other end, 1000 of each, over as many edges as nodes.
    const types = `${SPACE}-types`;
    ok(await ctx.call('POST', '/models/spaces', { items: [{ space: types }] }), 'POST /models/spaces');
    ctx.log(`models: ingesting ${fmtInt(nodes)} edges, ${BATCH} per request (${engine})`);
    const tEdges = now();
    for (let at = 0; at < nodes; at += BATCH) {
      const items = Array.from({ length: BATCH }, (_, k) => {
        const i = at + k;
        return {
          instanceType: 'edge',
          space: SPACE,
          externalId: `feeds-${i}`,
          type: { space: types, externalId: 'feeds' },
          startNode: { space: SPACE, externalId: `eq-${i}` },
          endNode: { space: SPACE, externalId: `eq-${(i * 7 + 1) % nodes}` },
        };
      });
      ok(await ctx.call('POST', '/models/instances', { items }), 'POST /models/instances (edges)');
    }
    ctx.note(`DM edges (${engine}): ${fmtInt(nodes)} edges in ${((now() - tEdges) / 1000).toFixed(1)} s.`);
    const twoHop = {
      with: {
        equipment: { nodes: { filter: { equals: { property: [SPACE, 'Equipment/v1', 'category'], value: 'cat-3' } } }, limit: 1000 },
        feeds: { edges: { from: 'equipment', direction: 'outwards', maxDistance: 1, filter: { equals: { property: ['edge', 'type'], value: { space: types, externalId: 'feeds' } } } }, limit: 1000 },
        fed: { nodes: { from: 'feeds', chainTo: 'destination' }, limit: 1000 },
      },
      select: { equipment: {}, fed: { sources: [{ source: view, properties: ['name', 'serial'] }] } },
    };
    const hop = ok(await ctx.call('POST', '/models/instances/query', twoHop), 'two-hop query');
    const expected = Math.min(1000, nodes / CATEGORIES);
    if (hop.items.equipment.length !== expected || hop.items.fed.length !== expected) {
      throw new Error(`two-hop query: ${hop.items.equipment.length} equipment, ${hop.items.fed.length} reached`);
    }
    await sequential(WARMUP, async () => void ok(await ctx.call('POST', '/models/instances/query', twoHop), 'two-hop query'));
    const hopLat = summarize(
      await ctx.profiled(`models-query-${engine}`, () => sequential(requests, async () => void ok(await ctx.call('POST', '/models/instances/query', twoHop), 'two-hop query'))),
    );
    ctx.report({
      id: `models.query.twoHop.${engine}`,
      workload: `DM query (${engine}): nodes of one category → their edges → the nodes at the other end, 1000 of each, ${fmtInt(nodes)} nodes and edges`,
      value: `p50 ${fmtMs(hopLat.p50)}, p90 ${fmtMs(hopLat.p90)}`,
      target: 'p50 ≤ 50 ms',
      met: hopLat.p50 <= 50,
      data: { ...hopLat },
    });

    // A sync chain over every node of the space: the feed read from its start, 2000 per page, as a client
    // that mirrors the space would, until a page comes back empty.
    const syncSet = { nodes: { filter: { equals: { property: ['node', 'space'], value: SPACE } } }, limit: 2000 };
    const syncBody = (cursor?: string) => ({ with: { s: syncSet }, select: { s: { sources: [{ source: view, properties: ['*'] }] } }, ...(cursor ? { cursors: { s: cursor } } : {}) });
    const tSync = now();
    let synced = 0;
    let syncPages = 0;
    let syncCursor: string | undefined;
    await ctx.profiled(`models-sync-${engine}`, async () => {
      for (;;) {
        const page = ok(await ctx.call('POST', '/models/instances/sync', syncBody(syncCursor)), 'sync');
        syncPages++;
        syncCursor = page.nextCursor.s;
        if (page.items.s.length === 0) break;
        synced += page.items.s.length;
      }
    });
    const syncSeconds = (now() - tSync) / 1000;
    if (synced !== nodes) throw new Error(`sync: ${synced} instances for ${nodes} nodes`);
    const syncRate = synced / syncSeconds;
    ctx.report({
      id: `models.sync.${engine}`,
      workload: `DM sync (${engine}): a chain of cursors over ${fmtInt(nodes)} nodes, 2000 per page, every property`,
      value: `${fmtInt(syncRate)} instances/s`,
      reference: `${syncPages} requests in ${syncSeconds.toFixed(1)} s`,
      target: '≥ 20,000 instances/s',
      met: syncRate >= 20_000,
      data: { nodes, seconds: syncSeconds, rate: syncRate, pages: syncPages },
    });

    await longRequests(ctx, nodes, engine);

    // One node read by id through the bench's view, before and after the core data model is put into the
    // project (its spaces renamed per run: users cannot write spaces starting with cdf_).
    const byIds = { items: [{ instanceType: 'node', space: SPACE, externalId: 'eq-1' }], sources: [{ source: view }] };
    const timed = async (what: string) => {
      await sequential(WARMUP, async () => void ok(await ctx.call('POST', '/models/instances/byids', byIds), what));
      return summarize(await sequential(requests, async () => void ok(await ctx.call('POST', '/models/instances/byids', byIds), what)));
    };
    const alone = await timed('byids, one-container schema');
    const paths = { spaces: '/models/spaces', containers: '/models/containers', views: '/models/views', dataModels: '/models/datamodels' };
    const renamed = (body: unknown) => JSON.parse(JSON.stringify(body).replace(/"cdf_(cdm(?:_3d|_units)?)"/g, (_, s: string) => JSON.stringify(`${SPACE}-${s}`)));
    for (const r of coreModelRequests()) ok(await ctx.call('POST', paths[r.kind], renamed(r.body)), `core data model ${r.kind}`);
    const withCore = await timed('byids, with the core data model');
    ctx.report({
      id: `models.byids.schemaSize.${engine}`,
      workload: `DM byids (${engine}): 1 node, the project also holding the core data model (29 containers, 33 views)`,
      value: `p50 ${fmtMs(withCore.p50)}`,
      reference: `before the core data model: p50 ${fmtMs(alone.p50)}`,
      ratio: `${fmtRatio(withCore.p50 / alone.p50)} of it`,
      target: '≤ 1.2× of it',
      met: withCore.p50 / alone.p50 <= 1.2,
      data: { withCore, alone },
    });
  },
};

/** Runs `long` while GETs of one event go one after another; how long it took, and how long the GETs sent meanwhile waited. */
async function whileRunning(ctx: BenchContext, long: () => Promise<HttpResponse>, eventId: number, what: string): Promise<{ ms: number; gets: number[] }> {
  const t = now();
  let done = false;
  const pending = long().then((res) => {
    done = true;
    ok(res, what);
    return now() - t;
  });
  const gets: number[] = [];
  while (!done) {
    const g = now();
    ok(await ctx.call('GET', `/events/${eventId}`), 'GET /events/{id}');
    gets.push(now() - g);
  }
  return { ms: await pending, gets };
}

async function longRequests(ctx: BenchContext, nodes: number, engine: string): Promise<void> {
  const created = await ctx.call('POST', '/events', { items: [{ externalId: `${SPACE}-probe` }] });
  if (created.status !== 201) throw new Error(`POST /events: HTTP ${created.status}`);
  const eventId = JSON.parse(created.body.toString('utf8')).items[0].id as number;
  const alone = summarize(await sequential(20, async () => void ok(await ctx.call('GET', `/events/${eventId}`), 'GET /events/{id}')));
  const histograms = {
    view,
    aggregates: [1, 2, 3, 4, 5].map((k) => ({ histogram: { property: 'serial', interval: (k * nodes) / DM_LIMITS.histogramBuckets } })),
  };
  const setLimit = DM_LIMITS.querySetLimitMax;
  const sets = Math.floor(DM_LIMITS.queryInstances / setLimit);
  const query = {
    with: Object.fromEntries(Array.from({ length: sets }, (_, i) => [`s${i}`, { nodes: { filter: { hasData: [view] } }, limit: setLimit }])),
    select: Object.fromEntries(Array.from({ length: sets }, (_, i) => [`s${i}`, { sources: [{ source: view, properties: ['*'] }] }])),
  };
  const containers = {
    items: Array.from({ length: DM_LIMITS.schemaItems }, (_, k) => ({
      space: SPACE,
      externalId: `Wide${k}`,
      properties: Object.fromEntries(Array.from({ length: DM_LIMITS.containerProperties }, (_, p) => [`p${p}`, { type: { type: p % 2 ? 'int64' : 'text' } }])),
      indexes: Object.fromEntries(Array.from({ length: DM_LIMITS.indexes }, (_, x) => [`i${x}`, { properties: [`p${x}`] }])),
    })),
  };
  const checked = {
    items: [{ ...container, type: undefined, properties: PROPERTIES, indexes: { byNote: { properties: ['note', 'name'] } }, constraints: { uniqueSerial: { properties: ['serial'] } } }],
  };
  // The apply answers with the index and constraint pending; the workload lasts until they are built.
  const buildIndexes = async (): Promise<HttpResponse> => {
    const applied = await ctx.call('POST', '/models/containers', checked);
    ok(applied, 'POST /models/containers (index and constraint)');
    for (;;) {
      const [read] = ok(await ctx.call('POST', '/models/containers/byids', { items: [{ space: SPACE, externalId: 'Equipment' }] }), 'POST /models/containers/byids').items;
      const states = [read.indexes.byNote.state, read.constraints.uniqueSerial.state];
      if (!states.includes('pending')) {
        if (states.some((state) => state !== 'current')) throw new Error(`the index and constraint ended ${states.join(', ')}`);
        return applied;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const search = { view, query: 'equipment', properties: ['note'], limit: 10 };
  const workloads: Array<[string, string, () => Promise<HttpResponse>]> = [
    ['histograms', `5 histograms of 10,000 buckets over ${fmtInt(nodes)} nodes`, () => ctx.call('POST', '/models/instances/aggregate', histograms)],
    ['query', `a query of ${sets} sets of ${fmtInt(setLimit)} nodes, every property`, () => ctx.call('POST', '/models/instances/query', query)],
    ['containers', `an apply of ${DM_LIMITS.schemaItems} containers of ${DM_LIMITS.containerProperties} properties and ${DM_LIMITS.indexes} indexes`, () => ctx.call('POST', '/models/containers', containers)],
    ['search', `a search whose word every one of ${fmtInt(nodes)} nodes has, limit 10`, () => ctx.call('POST', '/models/instances/search', search)],
    ['indexes', `an index of two text properties and a uniqueness constraint added to the container of ${fmtInt(nodes)} nodes, until both are built`, buildIndexes],
  ];
  for (const [id, workload, long] of workloads) {
    const run = await whileRunning(ctx, long, eventId, id);
    const worst = Math.max(...run.gets);
    ctx.report({
      id: `models.long.${id}.${engine}`,
      workload: `DM long request (${engine}): ${workload}, with GET /events/{id} meanwhile`,
      value: `GET worst ${fmtMs(worst)} (${run.gets.length} GETs); the request ${fmtMs(run.ms)}`,
      reference: `GET alone p50 ${fmtMs(alone.p50)}`,
      target: 'GET ≤ 250 ms',
      met: worst <= 250,
      data: { requestMs: run.ms, gets: run.gets, alone },
    });
  }
}
