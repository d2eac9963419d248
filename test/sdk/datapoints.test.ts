/**
 * Data points through the official JavaScript client, called as its users call it: insert by id, external id
 * and instance id (numeric and string, with status codes), raw retrieval paged by the cursor the client hands
 * back, retrieval with `includeOutsidePoints` and the status options, one aggregate query (its shape; the
 * aggregate semantics have their own tests), latest with `before`, and deleting ranges.
 */
import type { DatapointAggregates, Datapoints, DatapointsMultiQuery, ExternalDatapointsQuery } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let numeric: number;
let text: number;
const instanceId = { space: 'sdk-space', externalId: 'sdk-dp-dm' };
const T0 = Date.UTC(2024, 0, 1);
const MINUTE = 60_000;
const UNCERTAIN = 0x40000000;
const BAD = 0x80000000;

beforeAll(async () => {
  h = await startSdkHarness({ name: 'datapoints' });
  [{ id: numeric }, { id: text }] = (
    await h.seed('POST', '/timeseries', {
      items: [
        { externalId: 'sdk-dp-num', unit: 'bar' },
        { externalId: 'sdk-dp-text', isString: true },
        { externalId: 'sdk-dp-dm', instanceId },
      ],
    })
  ).items;
});
afterAll(() => h?.close());

const times = (points: Array<{ timestamp: Date }>) => points.map((p) => p.timestamp.getTime());
const values = (points: Array<{ value?: unknown }>) => points.map((p) => p.value);


/** Every page of one query item, following the cursor each answer carries, as a client user pages. */
async function retrieveAll(query: DatapointsMultiQuery): Promise<{ pages: number; points: Array<{ timestamp: Date; value?: unknown }> }> {
  const points: Array<{ timestamp: Date; value?: unknown }> = [];
  let cursor: string | undefined;
  for (let pages = 1; pages <= 100; pages++) {
    const [item] = (await h.client.datapoints.retrieve({ ...query, items: [{ ...query.items[0], cursor }] })) as Datapoints[];
    points.push(...item.datapoints);
    cursor = item.nextCursor;
    if (!cursor) return { pages, points };
  }
  throw new Error('no end after 100 pages');
}

describe('insert and retrieve', () => {
  beforeAll(async () => {
    // One point a minute for 250 minutes, by id; two more by external id; string points with statuses.
    const items: ExternalDatapointsQuery[] = [
      { id: numeric, datapoints: Array.from({ length: 250 }, (_, i) => ({ timestamp: T0 + i * MINUTE, value: i })) },
      {
        externalId: 'sdk-dp-text',
        datapoints: [
          { timestamp: T0, value: 'started' },
          { timestamp: T0 + MINUTE, value: 'sensor unsure', status: { code: UNCERTAIN } },
          { timestamp: T0 + 2 * MINUTE, value: 'sensor lost', status: { symbol: 'Bad' } },
        ] as never,
      },
      { instanceId, datapoints: [{ timestamp: T0, value: 1 }, { timestamp: T0 + MINUTE, value: 2, status: { code: BAD } }] as never },
    ];
    expect(await h.client.datapoints.insert(items)).toEqual({});
    expect(await h.client.datapoints.insert([{ externalId: 'sdk-dp-num', datapoints: [{ timestamp: new Date(T0 + 250 * MINUTE), value: 250.5 }] }])).toEqual({});
  });

  it('refuses one series named twice in one insert with 422 and the duplicate, and inserts nothing', async () => {
    const err = await clientFailure(
      h.client.datapoints.insert([
        { id: numeric, datapoints: [{ timestamp: T0 - 1, value: -1 }] },
        { externalId: 'sdk-dp-num', datapoints: [{ timestamp: T0 - 2, value: -2 }] },
      ]),
    );
    expect(err.status).toBe(422);
    const [item] = (await h.client.datapoints.retrieve({ items: [{ id: numeric }], start: T0 - 10, end: T0 })) as Datapoints[];
    expect(item.datapoints).toEqual([]);
  });

  it('reads raw points back by id, external id and instance id', async () => {
    const got = (await h.client.datapoints.retrieve({
      items: [{ externalId: 'sdk-dp-num', start: T0 + 248 * MINUTE }, { id: text }, { instanceId }],
      start: T0,
      end: T0 + 300 * MINUTE,
    })) as Datapoints[];
    expect(got.map((i) => i.isString)).toEqual([false, true, false]);
    expect(got[0]).toMatchObject({ id: numeric, externalId: 'sdk-dp-num', isStep: false, unit: 'bar' });
    expect(values(got[0].datapoints)).toEqual([248, 249, 250.5]);
    expect(got[0].datapoints[0].timestamp).toEqual(new Date(T0 + 248 * MINUTE));
    // Without the status options, good points only and no status.
    expect(values(got[1].datapoints)).toEqual(['started']);
    expect(got[2].instanceId).toEqual(instanceId);
    expect(values(got[2].datapoints)).toEqual([1]);
  });

  it('shows statuses and uncertain or bad points when asked', async () => {
    const [item] = (await h.client.datapoints.retrieve({
      items: [{ id: text, includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: false } as never],
      start: T0,
      end: T0 + 10 * MINUTE,
    })) as Datapoints[];
    expect(item.datapoints.map((p) => [p.value, (p as { status?: { code?: number } }).status?.code ?? 0])).toEqual([
      ['started', 0],
      ['sensor unsure', UNCERTAIN],
      ['sensor lost', BAD],
    ]);
  });

  it('pages raw points with the cursor each answer carries, each point once', async () => {
    const { pages, points } = await retrieveAll({ items: [{ id: numeric, limit: 60 }], start: T0, end: T0 + 251 * MINUTE });
    expect(pages).toBe(5);
    expect(times(points)).toEqual(Array.from({ length: 251 }, (_, i) => T0 + i * MINUTE));
  });

  it('takes the request-level limit and the relative times', async () => {
    const [item] = (await h.client.datapoints.retrieve({ items: [{ id: numeric }], start: T0, end: 'now', limit: 10 })) as Datapoints[];
    expect(item.datapoints).toHaveLength(10);
    expect(item.nextCursor).toBeDefined();
    const [recent] = (await h.client.datapoints.retrieve({ items: [{ id: numeric }], start: '2d-ago', end: 'now' })) as Datapoints[];
    expect(recent.datapoints).toEqual([]);
  });

  it('adds the points just outside the range when asked', async () => {
    const [item] = (await h.client.datapoints.retrieve({
      items: [{ id: numeric, start: T0 + 10 * MINUTE, end: T0 + 12 * MINUTE }],
      includeOutsidePoints: true,
    })) as Datapoints[];
    expect(values(item.datapoints)).toEqual([9, 10, 11, 12]);
  });

  it('answers an aggregate query in the shape of the reference', async () => {
    const [item] = (await h.client.datapoints.retrieve({
      items: [{ id: numeric }],
      start: T0,
      end: T0 + 4 * 60 * MINUTE,
      aggregates: ['count', 'average', 'min', 'max'],
      granularity: '1h',
    })) as DatapointAggregates[];
    expect(item).toMatchObject({ id: numeric, isString: false, isStep: false });
    expect(item.datapoints.map((p) => [p.timestamp.getTime(), p.count, p.min, p.max, typeof p.average])).toEqual([
      [T0, 60, 0, 59, 'number'],
      [T0 + 60 * MINUTE, 60, 60, 119, 'number'],
      [T0 + 120 * MINUTE, 60, 120, 179, 'number'],
      [T0 + 180 * MINUTE, 60, 180, 239, 'number'],
    ]);
    const monthly = await h.client.datapoints.retrieveDatapointMonthlyAggregates({ items: [{ id: numeric }], start: T0, end: T0 + 1, aggregates: ['count'] });
    expect(monthly[0].datapoints.map((p) => p.count)).toEqual([251]);
  });

  it('refuses unknown series with 400 and their list, or leaves them out with ignoreUnknownIds', async () => {
    const err = await clientFailure(h.client.datapoints.retrieve({ items: [{ externalId: 'sdk-dp-nope' }, { id: numeric }], start: T0 }));
    expect(err.status).toBe(400);
    expect(err.missing).toEqual([{ externalId: 'sdk-dp-nope' }]);
    const got = await h.client.datapoints.retrieve({ items: [{ externalId: 'sdk-dp-nope' }, { id: numeric }], start: T0, limit: 1, ignoreUnknownIds: true });
    expect(got.map((i) => i.id)).toEqual([numeric]);
  });
});

describe('latest', () => {
  beforeAll(async () => {
    await h.seed('POST', '/timeseries', { items: [{ externalId: 'sdk-dp-latest' }, { externalId: 'sdk-dp-empty' }] });
    await h.client.datapoints.insert([{ externalId: 'sdk-dp-latest', datapoints: [10, 20, 30].map((m) => ({ timestamp: T0 + m * MINUTE, value: m })) }]);
  });

  it('gives the latest point before now, before a time, and none for an empty series', async () => {
    const [now, before, beforeDate, empty] = await h.client.datapoints.retrieveLatest([
      { externalId: 'sdk-dp-latest' },
      { externalId: 'sdk-dp-latest', before: T0 + 30 * MINUTE },
      { externalId: 'sdk-dp-latest', before: new Date(T0 + 20 * MINUTE) },
      { externalId: 'sdk-dp-empty', before: 'now' },
    ]);
    expect(values(now.datapoints)).toEqual([30]);
    expect(values(before.datapoints)).toEqual([20]);
    expect(values(beforeDate.datapoints)).toEqual([10]);
    expect(now).toMatchObject({ externalId: 'sdk-dp-latest', isString: false });
    expect(empty.datapoints).toEqual([]);
  });

  it('takes a relative before and the status options, and skips unknown ids when asked', async () => {
    const [relative, withStatus] = await h.client.datapoints.retrieveLatest([
      { externalId: 'sdk-dp-latest', before: '1d-ago' },
      { id: text, includeStatus: true, ignoreBadDataPoints: false } as never,
    ]);
    expect(values(relative.datapoints)).toEqual([30]);
    expect(withStatus.datapoints.map((p) => [p.value, (p as { status?: { code?: number } }).status?.code])).toEqual([['sensor lost', BAD]]);
    const got = await h.client.datapoints.retrieveLatest([{ externalId: 'sdk-dp-nope' }, { id: numeric }], { ignoreUnknownIds: true });
    expect(got.map((i) => i.id)).toEqual([numeric]);
    const err = await clientFailure(h.client.datapoints.retrieveLatest([{ externalId: 'sdk-dp-nope' }]));
    expect(err.status).toBe(400);
    expect(err.missing).toEqual([{ externalId: 'sdk-dp-nope' }]);
  });
});

describe('delete', () => {
  it('deletes a range, a single point, and by instance id', async () => {
    await h.seed('POST', '/timeseries', { items: [{ externalId: 'sdk-dp-del' }] });
    await h.client.datapoints.insert([{ externalId: 'sdk-dp-del', datapoints: Array.from({ length: 10 }, (_, i) => ({ timestamp: T0 + i, value: i })) }]);
    expect(
      await h.client.datapoints.delete([
        { externalId: 'sdk-dp-del', inclusiveBegin: T0 + 2, exclusiveEnd: T0 + 5 },
        { externalId: 'sdk-dp-del', inclusiveBegin: new Date(T0 + 8) },
        { instanceId, inclusiveBegin: T0, exclusiveEnd: T0 + MINUTE },
      ]),
    ).toEqual({});
    const [left, dm] = (await h.client.datapoints.retrieve({ items: [{ externalId: 'sdk-dp-del' }, { instanceId, ignoreBadDataPoints: false } as never], start: T0, end: T0 + 2 * MINUTE })) as Datapoints[];
    expect(values(left.datapoints)).toEqual([0, 1, 5, 6, 7, 9]);
    expect(times(dm.datapoints)).toEqual([T0 + MINUTE]);
    const err = await clientFailure(h.client.datapoints.delete([{ externalId: 'sdk-dp-nope', inclusiveBegin: T0 }]));
    expect(err.status).toBe(400);
  });
});
