/**
 * Streams over HTTP: created from templates (the settings they copy, the reserved identifiers, unknown
 * templates, one per identifier), listed, retrieved with what they hold, deleted (idempotent, the identifier
 * free at once, the records purged by a job), the retired DELETE, templates from the configuration, and the
 * limits of a stream enforced on the writes of its records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_JOB } from '../src/resources/streams/streams.js';
import { sql } from '../src/storage/sql.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { bearer, builtInSigner } from './support/auth.js';
import { jobsDone } from './support/jobs.js';
import { ManualClock } from './support/manual-clock.js';
import { createStream, ids, ok, reading, setUpSchema, SPACE } from './support/records.js';

let h: Harness;
const TEMPLATES = {
  Tiny: { type: 'Mutable', maxRecordsTotal: 3, maxGigaBytesTotal: 1 },
  TinyBytes: { type: 'Immutable', maxRecordsTotal: 100, maxGigaBytesTotal: 0.000001, maxFilteringInterval: 'P1D' },
};

beforeAll(async () => {
  h = await startHarness({}, { STRATA_STREAM_TEMPLATES: JSON.stringify(TEMPLATES) });
  await setUpSchema(h);
});
afterAll(() => h.close());

const create = (externalId: string, template: string) => h.post('/streams', { items: [{ externalId, settings: { template: { name: template } } }] });

describe('creating streams', () => {
  it('creates a stream from a template, with the settings the template gives', async () => {
    const res = await create('events-archive', 'ImmutableTestStream');
    expect(res.status).toBe(201);
    const [stream] = res.body.items;
    expect(stream).toEqual({
      externalId: 'events-archive',
      createdTime: expect.any(Number),
      createdFromTemplate: 'ImmutableTestStream',
      type: 'Immutable',
      settings: {
        lifecycle: { retainedAfterSoftDelete: 'P1D', dataDeletedAfter: 'P7D' },
        limits: { maxRecordsTotal: { provisioned: 5_000_000 }, maxGigaBytesTotal: { provisioned: 5 }, maxFilteringInterval: 'P7D' },
      },
    });
    const live = (await create('live_alarms', 'BasicLiveData')).body.items[0];
    expect(live).toMatchObject({ type: 'Mutable', settings: { lifecycle: { retainedAfterSoftDelete: 'P7D' }, limits: { maxRecordsTotal: { provisioned: 5_000_000 } } } });
    expect(live.settings.lifecycle.dataDeletedAfter).toBeUndefined();
  });

  it('refuses an identifier in use (409 naming it), reserved ones, malformed ones and unknown templates', async () => {
    await createStream(h, 'taken', 'BasicLiveData');
    const again = await create('taken', 'ImmutableTestStream');
    expect(errorMessage(again, 409)).toBeTruthy();
    expect(again.body.error.duplicated).toEqual([{ externalId: 'taken' }]);
    for (const id of ['cdf_x', 'cognite_x', 'logs', 'records']) expect(errorMessage(await create(id, 'BasicLiveData'), 400)).toContain('reserved');
    for (const id of ['Upper', '-dash', 'end-', 'a'.repeat(101)]) expect(errorMessage(await create(id, 'BasicLiveData'), 400)).toContain('items[0].externalId');
    expect(errorMessage(await create('x1', 'NoSuchTemplate'), 400)).toBe(
      `items[0].settings.template.name: there is no stream template "NoSuchTemplate"; the templates are BasicLiveData, ImmutableArchive, ImmutableDataStaging, ImmutableNormalizedData, ImmutableTestStream, MutableTestStream, Tiny, TinyBytes`,
    );
    const two = await h.post('/streams', { items: [1, 2].map((n) => ({ externalId: `two${n}`, settings: { template: { name: 'Tiny' } } })) });
    expect(errorMessage(two, 400)).toContain('items');
  });
});

describe('reading streams', () => {
  it('lists the live streams and retrieves one, with what it holds when asked', async () => {
    await createStream(h, 'counted', 'BasicLiveData');
    await ok(h, '/streams/counted/records', { items: [reading('r1', { value: 1 }), reading('r2', { value: 2 })] }, 202);
    const listed = (await h.get('/streams')).body.items.map((s: { externalId: string }) => s.externalId);
    expect(listed).toEqual(expect.arrayContaining(['events-archive', 'live_alarms', 'counted']));
    const plain = (await h.get('/streams/counted')).body;
    expect(plain.settings.limits.maxRecordsTotal.consumed).toBeUndefined();
    const stats = (await h.get('/streams/counted?includeStatistics=true')).body;
    expect(stats.settings.limits.maxRecordsTotal).toEqual({ provisioned: 5_000_000, consumed: 2 });
    expect(stats.settings.limits.maxGigaBytesTotal.consumed).toBeGreaterThan(0);
    expect(stats.settings.limits.maxGigaBytesTotal.consumed).toBeLessThan(0.000001);
    const missing = await h.get('/streams/no-such-stream');
    expect(errorMessage(missing, 404)).toBe('The stream "no-such-stream" does not exist');
  });
});

describe('deleting streams', () => {
  it('deletes a stream: gone at once, its identifier free, its records purged by a job; deleting again is no error', async () => {
    await createStream(h, 'doomed', 'BasicLiveData');
    await ok(h, '/streams/doomed/records', { items: [reading('d1', { value: 1 }), reading('d2', { value: 2 })] }, 202);
    expect((await h.post('/streams/delete', { items: [{ externalId: 'doomed' }] })).status).toBe(200);
    expect((await h.get('/streams/doomed')).status).toBe(404);
    expect(errorMessage(await h.post('/streams/doomed/records/filter', {}), 404)).toBe('The stream "doomed" does not exist');
    expect((await h.get('/streams')).body.items.map((s: { externalId: string }) => s.externalId)).not.toContain('doomed');
    // The identifier names a new, empty stream at once.
    await createStream(h, 'doomed', 'BasicLiveData');
    expect((await ok(h, '/streams/doomed/records/filter', {})).items).toEqual([]);
    await jobsDone(h);
    const left = await h.strata.services.db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM records WHERE stream_id IN (SELECT id FROM streams WHERE external_id = 'doomed' AND deleted_time IS NOT NULL)`,
    );
    expect(Number(left[0].n)).toBe(0);
    const rows = await h.strata.services.db.all(sql`SELECT id FROM streams WHERE external_id = 'doomed'`);
    expect(rows).toHaveLength(1);
    expect((await h.post('/streams/delete', { items: [{ externalId: 'never-was' }] })).status).toBe(200);
  });

  it('answers the retired DELETE /streams/{id} with 410, naming the operation to use', async () => {
    await createStream(h, 'kept', 'BasicLiveData');
    expect(errorMessage(await h.request('DELETE', '/streams/kept'), 410)).toContain('POST /streams/delete');
    expect((await h.get('/streams/kept')).status).toBe(200);
  });
});

describe('limits of a stream', () => {
  it('refuses records past maxRecordsTotal, whole, and counts replaced and deleted records as they are', async () => {
    await createStream(h, 'tiny', 'Tiny');
    await ok(h, '/streams/tiny/records', { items: [reading('t1', {}), reading('t2', {})] }, 202);
    const over = await h.post('/streams/tiny/records', { items: [reading('t3', {}), reading('t4', {})] });
    expect(errorMessage(over, 400)).toBe('The stream "tiny" holds at most 3 records (maxRecordsTotal); it holds 2, and this request adds 2');
    expect((await ok(h, '/streams/tiny/records/filter', {})).items.map((r: { externalId: string }) => r.externalId)).toEqual(['t1', 't2']);
    // Replacing records adds none; deleting one makes room.
    await ok(h, '/streams/tiny/records/upsert', { items: [reading('t1', { value: 5 }), reading('t2', { value: 6 }), reading('t3', {})] }, 202);
    expect(errorMessage(await h.post('/streams/tiny/records', { items: [reading('t4', {})] }), 400)).toContain('it holds 3');
    await ok(h, '/streams/tiny/records/delete', { items: [{ space: SPACE, externalId: 't1' }] });
    await ok(h, '/streams/tiny/records', { items: [reading('t4', {})] }, 202);
    expect((await h.get('/streams/tiny?includeStatistics=true')).body.settings.limits.maxRecordsTotal.consumed).toBe(3);
  });

  it('refuses records past maxGigaBytesTotal', async () => {
    await createStream(h, 'tiny-bytes', 'TinyBytes');
    const big = reading('b1', { labels: Array.from({ length: 100 }, (_, i) => `label number ${i}`) });
    expect(errorMessage(await h.post('/streams/tiny-bytes/records', { items: [big] }), 400)).toContain('holds at most 0.000001 GB (maxGigaBytesTotal)');
    await ok(h, '/streams/tiny-bytes/records', { items: [reading('b2', {})] }, 202);
  });
});

describe('retention', () => {
  it('purges, every quarter of an hour, the records past their retention and the tombstones past theirs', async () => {
    const clock = new ManualClock(Date.now());
    const templates = { Short: { type: 'Immutable', dataDeletedAfter: 'PT1M', maxFilteringInterval: 'P1D', maxRecordsTotal: 100, maxGigaBytesTotal: 1 } };
    const r = await startHarness({}, { STRATA_STREAM_TEMPLATES: JSON.stringify(templates), STRATA_RECORD_TOMBSTONE_RETENTION_MS: '60000' }, { clock });
    try {
      await setUpSchema(r);
      await createStream(r, 'short', 'Short');
      await createStream(r, 'live', 'BasicLiveData');
      await ok(r, '/streams/short/records', { items: [reading('s1', {}), reading('s2', {})] }, 202);
      await ok(r, '/streams/live/records', { items: [reading('kept', {}), reading('gone', {})] }, 202);
      await ok(r, '/streams/live/records/delete', { items: [{ space: SPACE, externalId: 'gone' }] });
      const rows = async (stream: string) =>
        Number((await r.strata.services.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM records WHERE stream_id = (SELECT id FROM streams WHERE external_id = ${stream})`))!.n);
      expect([await rows('short'), await rows('live')]).toEqual([2, 2]);

      clock.advance(16 * 60_000);
      await retentionRan(r);
      expect([await rows('short'), await rows('live')]).toEqual([0, 1]);
      expect((await r.get('/streams/short?includeStatistics=true')).body.settings.limits.maxRecordsTotal.consumed).toBe(0);
      expect((await r.get('/streams/live?includeStatistics=true')).body.settings.limits.maxRecordsTotal.consumed).toBe(1);
    } finally {
      await r.close();
    }
  });

  it('drops the time partitions of an immutable stream that have wholly expired, and deletes the expired rows of the one that straddles the end', async () => {
    const HOUR = 3_600_000;
    // Records kept four hours lie in partitions an hour wide (on PostgreSQL); the clock starts at the next half
    // past an hour (ahead of the real one, so that the tokens signed below are valid from its start).
    const start = Math.floor(Date.now() / HOUR) * HOUR + HOUR + 30 * 60_000;
    const clock = new ManualClock(start);
    const templates = { Hours: { type: 'Immutable', dataDeletedAfter: 'PT4H', maxFilteringInterval: 'P1D', maxRecordsTotal: 100, maxGigaBytesTotal: 1 } };
    const r = await startHarness({}, { STRATA_STREAM_TEMPLATES: JSON.stringify(templates) }, { clock });
    try {
      await setUpSchema(r);
      await createStream(r, 'hours', 'Hours');
      const signer = await builtInSigner(r);
      // A token valid on the server's clock, which the test moves by hours.
      const auth = async () => bearer(await signer.sign({ sub: 'strata-admin' }, { exp: Math.floor(clock.now() / 1000) + 600 }));
      const post = async (path: string, body: unknown) => {
        const res = await r.request('POST', path, body, await auth());
        expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
        return res.body;
      };
      await post('/streams/hours/records', { items: [reading('a1', {}), reading('a2', {})] });
      clock.advance(HOUR);
      await post('/streams/hours/records', { items: [reading('b1', {})] });
      clock.advance(10 * 60_000);
      await post('/streams/hours/records', { items: [reading('c1', {}), reading('c2', {})] });
      await jobsDone(r);
      const db = r.strata.services.db;
      const partitions = async () =>
        (
          await db.all<{ name: string }>(
            sql`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass((SELECT 'records_s' || id FROM streams WHERE external_id = 'hours'))`,
          )
        ).length;
      if (db.dialect.kind === 'postgres') expect(await partitions()).toBe(2);

      // Four hours and five minutes after b1: the hour of a1 and a2 has wholly expired, b1 has, c1 and c2 have
      // not. The job is started here rather than waited for from its schedule (the test above covers that).
      clock.set(start + 5 * HOUR + 5 * 60_000);
      const { project_id: projectId } = (await db.get<{ project_id: number }>(sql`SELECT project_id FROM streams WHERE external_id = 'hours'`))!;
      await db.transaction((tx) => r.strata.services.jobs!.start(tx, { projectId: Number(projectId), kind: RETENTION_JOB, payload: { tombstoneRetentionMs: 60_000 } }));
      await jobsDone(r);
      const kept = await db.all<{ external_id: string }>(sql`SELECT external_id FROM records ORDER BY external_id`);
      expect(kept.map((k) => k.external_id)).toEqual(['c1', 'c2']);
      if (db.dialect.kind === 'postgres') expect(await partitions()).toBe(1);
      const stats = await r.request('GET', '/streams/hours?includeStatistics=true', undefined, await auth());
      expect(stats.body.settings.limits.maxRecordsTotal.consumed).toBe(2);
      const read = await post('/streams/hours/records/filter', { lastUpdatedTime: { gte: start }, limit: 10 });
      expect(ids(read.items)).toEqual(['c1', 'c2']);
    } finally {
      await r.close();
    }
  });
});

/** Resolves once a retention job of the harness's project has run to its end. */
async function retentionRan(r: Harness): Promise<void> {
  const { db, changes } = r.strata.services;
  for (;;) {
    const watch = changes!.watch({ area: 'jobs' });
    const done = await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM jobs WHERE kind = 'streams.retention' AND state = 'succeeded'`);
    if (Number(done!.n) > 0) {
      watch.close();
      return;
    }
    await watch.wait({ deadline: Infinity });
  }
}
