/**
 * Entity matching over HTTP, on both backends: models fitted as jobs (unsupervised, and supervised by
 * confirmed matches), predictions checked on a small set whose right matches are known, refits, reads,
 * updates, deletes, lists with cursors and filters, and the refusals of bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { jobsDone } from './support/jobs.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('em-reader', 'em-writer', 'em-results', 'em-token-writer', 'em-token-other') });
});
afterAll(() => h.close());

// Assets (targets) and the time series (sources) that belong to them, named as plants name them.
const assets = [
  { id: 101, externalId: 'a-pump', name: '21-PA-0012 Crude pump' },
  { id: 102, externalId: 'a-comp', name: '23-KA-9101 Export compressor' },
  { id: 103, externalId: 'a-sep', name: '20-VA-0001 Inlet separator' },
  { id: 104, externalId: 'a-hx', name: '24-HA-1134 Cooler' },
];
const series = [
  { id: 1, externalId: 'ts-pump', name: '21PA0012 discharge pressure' },
  { id: 2, externalId: 'ts-comp', name: '23KA9101 suction temperature' },
  { id: 3, externalId: 'ts-sep', name: '20VA0001 level' },
  { id: 4, externalId: 'ts-hx', name: '24HA1134 outlet temperature' },
];
const RIGHT: Record<string, string> = { 'ts-pump': 'a-pump', 'ts-comp': 'a-comp', 'ts-sep': 'a-sep', 'ts-hx': 'a-hx' };

async function fitted(body: Record<string, unknown>) {
  const res = await h.post('/context/entitymatching', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.status).toBe('Queued');
  await jobsDone(h);
  return (await h.get(`/context/entitymatching/${res.body.id}`)).body;
}

async function predicted(body: Record<string, unknown>) {
  const res = await h.post('/context/entitymatching/predict', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({ jobId: expect.any(Number), status: 'Queued' });
  await jobsDone(h);
  const result = await h.get(`/context/entitymatching/jobs/${res.body.jobId}`);
  expect(result.status).toBe(200);
  expect(result.body.status).toBe('Completed');
  return result.body.items as Array<{ source: Record<string, unknown>; matchFrom: Record<string, unknown>; matches: Array<{ score: number; target: Record<string, unknown> }> }>;
}

function best(items: Awaited<ReturnType<typeof predicted>>): Record<string, string | undefined> {
  return Object.fromEntries(items.map((i) => [i.source.externalId as string, i.matches[0]?.target.externalId as string | undefined]));
}

describe('fitting and predicting', () => {
  it('an unsupervised model matches each time series to its asset', async () => {
    const model = await fitted({ externalId: 'em-simple', name: 'simple', sources: series, targets: assets });
    expect(model).toMatchObject({
      externalId: 'em-simple',
      name: 'simple',
      status: 'Completed',
      featureType: 'simple',
      classifier: 'randomforest',
      matchFields: [{ source: 'name', target: 'name' }],
      ignoreMissingFields: false,
      createdTime: expect.any(Number),
      startTime: expect.any(Number),
      statusTime: expect.any(Number),
    });
    expect(model).not.toHaveProperty('dataKey');
    expect(model).not.toHaveProperty('fitted');
    // Without entities of its own, the prediction matches the data the model was fitted on.
    const items = await predicted({ id: model.id });
    expect(best(items)).toEqual(RIGHT);
    for (const item of items) expect(item.matches).toHaveLength(1);
  });

  it.each(['simple', 'insensitive', 'bigram', 'frequencyweightedbigram', 'bigramextratokenizers', 'bigramcombo'])('feature type %s finds the right matches', async (featureType) => {
    const model = await fitted({ featureType, sources: series, targets: assets });
    expect(model.featureType).toBe(featureType);
    expect(best(await predicted({ id: model.id, sources: series, targets: assets }))).toEqual(RIGHT);
  });

  it('numMatches and scoreThreshold bound the matches, best first', async () => {
    const model = await fitted({ featureType: 'bigram', sources: series, targets: assets });
    const items = await predicted({ id: model.id, sources: [{ name: '21PA0012 and 23KA9101' }], targets: assets, numMatches: 3 });
    const scores = items[0].matches.map((m) => m.score);
    expect(scores.length).toBeGreaterThanOrEqual(2);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(items[0].matches.slice(0, 2).map((m) => m.target.externalId).sort()).toEqual(['a-comp', 'a-pump']);
    const strict = await predicted({ id: model.id, sources: [{ name: '21PA0012 and 23KA9101' }], targets: assets, numMatches: 3, scoreThreshold: 0.99 });
    expect(strict[0].matches).toEqual([]);
    // A source that shares nothing with any target has no match.
    expect((await predicted({ id: model.id, sources: [{ name: 'zzz' }], targets: assets }))[0]).toEqual({ source: { name: 'zzz' }, matchFrom: { name: 'zzz' }, matches: [] });
  });

  it('confirmed matches teach the model what a match looks like', async () => {
    // Names that share a word with the wrong asset: unsupervised, "Cooler" pulls the heat exchanger's series away.
    const targets = [
      { id: 1, name: 'Cooler A' },
      { id: 2, name: 'Pump 0012' },
      { id: 3, name: 'Pump 0013' },
      { id: 4, name: 'Valve 0099' },
    ];
    const sources = [
      { id: 11, name: 'PMP-0012 Cooler status' },
      { id: 12, name: 'PMP-0013 Cooler status' },
      { id: 13, name: 'VLV-0099 Cooler status' },
    ];
    const unsupervised = await fitted({ sources, targets, featureType: 'bigram' });
    const before = await predicted({ id: unsupervised.id });
    expect(before.map((i) => i.matches[0].target.id)).toEqual([1, 1, 1]);
    const trueMatches = [
      { sourceId: 11, targetId: 2 },
      { sourceId: 12, targetId: 3 },
    ];
    for (const [featureType, classifier] of [
      ['bigramextratokenizers', 'randomforest'],
      ['bigramextratokenizers', 'logisticregression'],
      ['bigramcombo', 'augmentedlogisticregression'],
      ['bigramcombo', 'decisiontree'],
      ['bigramcombo', 'augmentedrandomforest'],
    ]) {
      const model = await fitted({ sources, targets, featureType, trueMatches, classifier });
      expect(model).toMatchObject({ status: 'Completed', featureType, classifier });
      const after = await predicted({ id: model.id });
      expect(after.map((i) => i.matches[0].target.id)).toEqual([2, 3, 4]);
    }
  });

  it('matches other fields than name, and reads missing ones as empty when asked', async () => {
    const model = await fitted({
      sources: [{ id: 1, name: 'xx-yy' }],
      targets: [
        { id: 2, bloop: 'yy' },
        { id: 3, bloop: 'zz' },
        { id: 4, name: 'no bloop' },
      ],
      matchFields: [{ source: 'name', target: 'bloop' }],
      ignoreMissingFields: true,
      trueMatches: [{ sourceId: 1, targetId: 2 }],
      featureType: 'bigram',
    });
    expect(model.matchFields).toEqual([{ source: 'name', target: 'bloop' }]);
    const items = await predicted({ externalId: undefined, id: model.id, sources: [{ name: 'foo-bar' }], targets: [{ bloop: 'foo-42' }] });
    expect(Object.keys(items[0]).sort()).toEqual(['matchFrom', 'matches', 'source']);
    expect(items[0].matches[0]).toEqual({ score: expect.any(Number), target: { bloop: 'foo-42' }, matchTo: { bloop: 'foo-42' } });
    expect(items[0].matchFrom).toEqual(items[0].source);
  });
});

describe('refit', () => {
  it('creates a new model from the original with the added matches', async () => {
    const original = await fitted({ externalId: 'em-orig', sources: series, targets: assets, featureType: 'bigram', name: 'orig', trueMatches: [{ sourceId: 1, targetId: 101 }] });
    const res = await h.post('/context/entitymatching/refit', { externalId: 'em-orig', newExternalId: 'em-refit', trueMatches: [{ sourceExternalId: 'ts-sep', targetExternalId: 'a-sep' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ externalId: 'em-refit', originalId: original.id, featureType: 'bigram', classifier: 'randomforest', name: 'orig', status: 'Queued' });
    expect(res.body.id).not.toBe(original.id);
    await jobsDone(h);
    expect((await h.get(`/context/entitymatching/${res.body.id}`)).body.status).toBe('Completed');
    expect(best(await predicted({ id: res.body.id }))).toEqual(RIGHT);
    // Without newExternalId the new model has none (null, as the reference always answers externalId, name,
    // description and errorMessage); the original is unchanged.
    const plain = await h.post('/context/entitymatching/refit', { id: original.id, trueMatches: [{ sourceId: 2, targetId: 102 }] });
    expect(plain.body).toMatchObject({ externalId: null, name: 'orig', description: null, errorMessage: null });
    await jobsDone(h);
    const [listed] = (await h.post('/context/entitymatching/list', { filter: { originalId: original.id, featureType: 'bigram' }, limit: 1000 })).body.items.filter((m: { id: number }) => m.id === plain.body.id);
    expect(listed).toMatchObject({ externalId: null, description: null, errorMessage: null });
    expect((await h.get(`/context/entitymatching/${plain.body.id}`)).body).toMatchObject({ externalId: null, description: null });
    expect((await h.get(`/context/entitymatching/${original.id}`)).body).toMatchObject({ externalId: 'em-orig', status: 'Completed' });
    const derived = await h.post('/context/entitymatching/list', { filter: { originalId: original.id } });
    expect(derived.body.items.map((m: { id: number }) => m.id).sort()).toEqual([res.body.id, plain.body.id].sort());
  });

  it('refuses a match naming an entity the data does not hold', async () => {
    const model = await fitted({ sources: series, targets: assets });
    expect(errorMessage(await h.post('/context/entitymatching/refit', { id: model.id, trueMatches: [{ sourceId: 1, targetId: 999 }] }), 400)).toMatch(
      /trueMatches\[0\]\.targetId: no target has id 999/,
    );
  });
});

describe('models', () => {
  it('are read by ids, updated and deleted, at most 1000 per request, unknown ones missing', async () => {
    const a = await fitted({ externalId: 'em-a', sources: series, targets: assets });
    const b = await fitted({ externalId: 'em-b', sources: series, targets: assets });
    const read = await h.post('/context/entitymatching/byids', { items: [{ id: a.id }, { externalId: 'em-b' }] });
    expect(read.body.items.map((m: { id: number }) => m.id)).toEqual([a.id, b.id]);
    // A model asked for twice is answered twice, in the order asked.
    const twice = await h.post('/context/entitymatching/byids', { items: [{ externalId: 'em-b' }, { id: a.id }, { id: b.id }] });
    expect(twice.body.items.map((m: { id: number }) => m.id)).toEqual([b.id, a.id, b.id]);
    const missing = await h.post('/context/entitymatching/byids', { items: [{ id: a.id }, { externalId: 'nope' }] });
    expect(errorMessage(missing, 400)).toBeTruthy();
    expect(missing.body.error.missing).toEqual([{ externalId: 'nope' }]);
    expect((await h.post('/context/entitymatching/byids', { items: [{ externalId: 'nope' }], ignoreUnknownIds: true })).body.items).toEqual([]);
    const many = Array.from({ length: 1001 }, (_, i) => ({ id: i + 1 }));
    for (const op of ['byids', 'delete']) expect(errorMessage(await h.post(`/context/entitymatching/${op}`, { items: many }), 400)).toMatch(/items/);
    const tooMany = many.map((r) => ({ ...r, update: { name: { set: 'x' } } }));
    expect(errorMessage(await h.post('/context/entitymatching/update', { items: tooMany }), 400)).toMatch(/items/);

    const updated = await h.post('/context/entitymatching/update', {
      items: [
        { externalId: 'em-a', update: { name: { set: 'renamed' }, description: { set: 'ø' } } },
        { id: b.id, update: { description: { set: 'b' } } },
      ],
    });
    expect(updated.status).toBe(200);
    expect(updated.body.items).toMatchObject([{ name: 'renamed', description: 'ø' }, { description: 'b' }]);
    expect(errorMessage(await h.post('/context/entitymatching/update', { items: [{ id: a.id, update: { featureType: { set: 'bigram' } } }] }), 400)).toMatch(/featureType/);

    // Unknown models are passed over by a delete, as the official clients expect.
    expect((await h.post('/context/entitymatching/delete', { items: [{ id: a.id }, { externalId: 'nope' }] })).body).toEqual({});
    expect((await h.get(`/context/entitymatching/${a.id}`)).status).toBe(400);
    expect((await h.post('/context/entitymatching/predict', { id: a.id })).status).toBe(400);
  });

  it('are listed 100 to a page unless asked, at most 1000, with nextCursor, and filtered', async () => {
    const all: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.get(`/context/entitymatching?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      all.push(...page.body.items.map((m: { id: number }) => m.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    const whole = await h.get('/context/entitymatching');
    expect(whole.body.items.map((m: { id: number }) => m.id)).toEqual(all);
    expect(all.length).toBeGreaterThan(10);
    expect(errorMessage(await h.get('/context/entitymatching?limit=1001'), 400)).toMatch(/limit/);
    const bigram = await h.post('/context/entitymatching/list', { filter: { featureType: 'bigram' }, limit: 1000 });
    expect(bigram.body.items.length).toBeGreaterThan(0);
    expect(new Set(bigram.body.items.map((m: { featureType: string }) => m.featureType))).toEqual(new Set(['bigram']));
    expect((await h.post('/context/entitymatching/list', { filter: { name: 'simple' } })).body.items.map((m: { externalId: string }) => m.externalId)).toEqual(['em-simple']);
    expect(errorMessage(await h.post('/context/entitymatching/list', { filter: { status: 'Completed' } }), 400)).toMatch(/filter/);
  });
});

describe('bad input', () => {
  async function count(): Promise<number> {
    return (await h.post('/context/entitymatching/list', { limit: 1000 })).body.items.length;
  }

  it('is refused, naming what and where, and creates nothing', async () => {
    const before = await count();
    expect(errorMessage(await h.post('/context/entitymatching', { sources: series, targets: [{ id: 1, name: 'x' }, { id: 2 }] }), 400)).toMatch(/targets\[1\]\.name: missing/);
    expect(errorMessage(await h.post('/context/entitymatching', { sources: [{ name: 7 }], targets: assets }), 400)).toMatch(/sources\[0\]\.name: missing or not a string/);
    expect(
      errorMessage(await h.post('/context/entitymatching', { sources: series, targets: assets, trueMatches: [{ sourceId: 1, targetId: 101 }, { sourceExternalId: 'x', targetId: 101 }] }), 400),
    ).toMatch(/trueMatches\[1\]\.sourceExternalId: no source has externalId "x"/);
    expect(errorMessage(await h.post('/context/entitymatching', { sources: series, targets: [] }), 400)).toMatch(/targets/);
    expect(errorMessage(await h.post('/context/entitymatching', { sources: series, targets: assets, featureType: 'trigram' }), 400)).toMatch(/featureType/);
    expect(errorMessage(await h.post('/context/entitymatching', { sources: series, targets: assets, classifier: 'svm' }), 400)).toMatch(/classifier/);
    expect(errorMessage(await h.post('/context/entitymatching', { sources: series, targets: assets, trueMatches: [{ sourceId: 1 }] }), 400)).toMatch(/trueMatches/);
    expect(errorMessage(await h.post('/context/entitymatching', { sources: series, targets: assets, externalId: 'x'.repeat(256) }), 400)).toMatch(/externalId/);
    await fitted({ externalId: 'em-dup', sources: series, targets: assets });
    expect((await h.post('/context/entitymatching', { externalId: 'em-dup', sources: series, targets: assets })).status).toBe(409);
    expect(await count()).toBe(before + 1);
  });

  it('a prediction needs a fitted model, named once, and entities with the fields to match', async () => {
    const model = await fitted({ sources: series, targets: assets });
    expect(errorMessage(await h.post('/context/entitymatching/predict', {}), 400)).toMatch(/by id or by externalId/);
    expect(errorMessage(await h.post('/context/entitymatching/predict', { id: model.id, numMatches: 101 }), 400)).toMatch(/numMatches/);
    expect(errorMessage(await h.post('/context/entitymatching/predict', { id: model.id, scoreThreshold: 1.5 }), 400)).toMatch(/scoreThreshold/);
    expect(errorMessage(await h.post('/context/entitymatching/predict', { id: model.id, sources: [{ title: 'x' }] }), 400)).toMatch(/sources\[0\]\.name/);
    expect(errorMessage(await h.get('/context/entitymatching/jobs/999999999'), 400)).toBeTruthy();
    // Queued, not yet fitted: the prediction is refused until the fit completes.
    const queued = await h.post('/context/entitymatching', { sources: series, targets: assets });
    const early = await h.post('/context/entitymatching/predict', { id: queued.body.id });
    if (early.status === 400) expect(errorMessage(early, 400)).toMatch(/needs a model whose fit has Completed/);
    await jobsDone(h);
  });
});

describe('capabilities', () => {
  it('READ reads and lists, WRITE fits, predicts, updates and deletes; results need assetsAcl:READ besides', async () => {
    const model = await fitted({ externalId: 'em-caps', sources: series, targets: assets });
    const job = (await h.post('/context/entitymatching/predict', { id: model.id })).body.jobId;
    await jobsDone(h);
    const reader = bearer(await namedClientToken(h, 'em-reader', [capability('entityMatchingAcl', ['READ'])]));
    const writer = bearer(await namedClientToken(h, 'em-writer', [capability('entityMatchingAcl', ['WRITE'])]));
    const results = bearer(await namedClientToken(h, 'em-results', [capability('entityMatchingAcl', ['READ', 'WRITE']), capability('assetsAcl', ['READ'])]));
    expect((await h.request('GET', '/context/entitymatching', undefined, reader)).status).toBe(200);
    expect((await h.request('POST', '/context/entitymatching/byids', { items: [{ id: model.id }] }, reader)).status).toBe(200);
    expect(errorMessage(await h.request('POST', '/context/entitymatching', { sources: series, targets: assets }, reader), 403)).toMatch(/entityMatchingAcl:WRITE/);
    expect((await h.request('POST', '/context/entitymatching/predict', { id: model.id }, reader)).status).toBe(403);
    expect((await h.request('POST', '/context/entitymatching/refit', { id: model.id, trueMatches: [{ sourceId: 1, targetId: 101 }] }, writer)).status).toBe(403);
    expect((await h.request('GET', '/context/entitymatching', undefined, writer)).status).toBe(403);
    expect(errorMessage(await h.request('GET', `/context/entitymatching/jobs/${job}`, undefined, writer), 403)).toMatch(/assetsAcl:READ/);
    expect((await h.request('GET', `/context/entitymatching/jobs/${job}`, undefined, results)).body.status).toBe('Completed');
    await jobsDone(h);
  });

  it('answers a prediction with an X-Job-Token, with which its starter reads the results without assetsAcl:READ', async () => {
    const model = await fitted({ externalId: 'em-token', sources: series, targets: assets });
    const writer = bearer(await namedClientToken(h, 'em-token-writer', [capability('entityMatchingAcl', ['WRITE'])]));
    const other = bearer(await namedClientToken(h, 'em-token-other', [capability('entityMatchingAcl', ['WRITE'])]));
    const started = await h.request('POST', '/context/entitymatching/predict', { id: model.id }, writer);
    expect(started.status).toBe(200);
    const token = started.headers['x-job-token'] as string;
    expect(token).toMatch(/^[\w-]{20,}$/);
    const second = await h.request('POST', '/context/entitymatching/predict', { id: model.id }, writer);
    await jobsDone(h);
    const read = (jobId: number, auth: Record<string, string>, jobToken?: string) =>
      h.request('GET', `/context/entitymatching/jobs/${jobId}`, undefined, { ...auth, ...(jobToken ? { 'x-job-token': jobToken } : {}) });
    expect((await read(started.body.jobId, writer, token)).body.status).toBe('Completed');
    expect(errorMessage(await read(started.body.jobId, writer), 403)).toMatch(/assetsAcl:READ/);
    // Bound to its job and to the principal that started it.
    expect(errorMessage(await read(second.body.jobId, writer, token), 403)).toMatch(/assetsAcl:READ/);
    expect(errorMessage(await read(started.body.jobId, other, token), 403)).toMatch(/assetsAcl:READ/);
    expect(errorMessage(await read(started.body.jobId, writer, 'not-a-token'), 403)).toMatch(/assetsAcl:READ/);
    expect((await read(second.body.jobId, writer, second.headers['x-job-token'] as string)).status).toBe(200);
  });
});
