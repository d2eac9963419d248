/**
 * `POST /timeseries/data/list` with `Accept: application/protobuf`, as the official Python SDK reads data
 * points: responses are decoded with the published message schema (declared here, apart from the encoder)
 * and compared with the JSON response to the same request. And `POST /timeseries/data` with a
 * `DataPointInsertionRequest` body, encoded with the same schema.
 */
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

const schema = protobuf.Root.fromJSON({
  nested: {
    Status: { fields: { code: { type: 'int64', id: 1 }, symbol: { type: 'string', id: 2 } } },
    NumericDatapoint: { fields: { timestamp: { type: 'int64', id: 1 }, value: { type: 'double', id: 2 }, status: { type: 'Status', id: 3 }, nullValue: { type: 'bool', id: 4 } } },
    NumericDatapoints: { fields: { datapoints: { rule: 'repeated', type: 'NumericDatapoint', id: 1 } } },
    StringDatapoint: { fields: { timestamp: { type: 'int64', id: 1 }, value: { type: 'string', id: 2 }, status: { type: 'Status', id: 3 }, nullValue: { type: 'bool', id: 4 } } },
    StringDatapoints: { fields: { datapoints: { rule: 'repeated', type: 'StringDatapoint', id: 1 } } },
    AggregateDatapoint: {
      fields: {
        ...Object.fromEntries(
          ['timestamp', 'average', 'max', 'min', 'count', 'sum', 'interpolation', 'stepInterpolation', 'continuousVariance', 'discreteVariance', 'totalVariation', 'countGood', 'countUncertain', 'countBad', 'durationGood', 'durationUncertain', 'durationBad'].map(
            (name, i) => [name, { type: i === 0 ? 'int64' : 'double', id: i + 1 }],
          ),
        ),
        maxDatapoint: { type: 'NumericDatapoint', id: 18 },
        minDatapoint: { type: 'NumericDatapoint', id: 19 },
      },
    },
    AggregateDatapoints: { fields: { datapoints: { rule: 'repeated', type: 'AggregateDatapoint', id: 1 } } },
    DataPointListItem: {
      oneofs: { datapointType: { oneof: ['numericDatapoints', 'stringDatapoints', 'aggregateDatapoints'] } },
      fields: {
        id: { type: 'int64', id: 1 },
        externalId: { type: 'string', id: 2 },
        numericDatapoints: { type: 'NumericDatapoints', id: 3 },
        stringDatapoints: { type: 'StringDatapoints', id: 4 },
        aggregateDatapoints: { type: 'AggregateDatapoints', id: 5 },
        isString: { type: 'bool', id: 6 },
        isStep: { type: 'bool', id: 7 },
        unit: { type: 'string', id: 8 },
        nextCursor: { type: 'string', id: 9 },
        unitExternalId: { type: 'string', id: 10 },
        instanceId: { type: 'InstanceId', id: 11 },
      },
    },
    DataPointListResponse: { fields: { items: { rule: 'repeated', type: 'DataPointListItem', id: 1 } } },
    InstanceId: { fields: { space: { type: 'string', id: 1 }, externalId: { type: 'string', id: 2 } } },
    StateDatapoint: { fields: { timestamp: { type: 'int64', id: 1 }, numericValue: { type: 'int64', id: 2 }, stringValue: { type: 'string', id: 3 } } },
    StateDatapoints: { fields: { datapoints: { rule: 'repeated', type: 'StateDatapoint', id: 1 } } },
    DataPointInsertionItem: {
      oneofs: { timeSeriesReference: { oneof: ['id', 'externalId', 'instanceId'] }, datapointType: { oneof: ['numericDatapoints', 'stringDatapoints', 'stateDatapoints'] } },
      fields: {
        id: { type: 'int64', id: 1 },
        externalId: { type: 'string', id: 2 },
        instanceId: { type: 'InstanceId', id: 5 },
        numericDatapoints: { type: 'NumericDatapoints', id: 3 },
        stringDatapoints: { type: 'StringDatapoints', id: 4 },
        stateDatapoints: { type: 'StateDatapoints', id: 6 },
      },
    },
    DataPointInsertionRequest: { fields: { items: { rule: 'repeated', type: 'DataPointInsertionItem', id: 1 } } },
  },
});
const Response = schema.lookupType('DataPointListResponse');
const InsertionRequest = schema.lookupType('DataPointInsertionRequest');

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const BAD = 0x80000000;

async function series(fields: Record<string, unknown>): Promise<number> {
  const res = await h.post('/timeseries', { items: [fields] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.items[0].id;
}

/** The same request as JSON and as protocol buffers, the latter decoded to plain objects. */
async function both(body: object): Promise<{ json: any; proto: any }> {
  const json = await h.post('/timeseries/data/list', body);
  expect(json.status, JSON.stringify(json.body)).toBe(200);
  const res = await h.strata.app.inject({
    method: 'POST',
    url: `${h.base}/timeseries/data/list`,
    headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json', accept: 'application/protobuf' },
    payload: JSON.stringify(body),
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('application/protobuf');
  const proto = Response.toObject(Response.decode(res.rawPayload), { longs: Number, oneofs: true, defaults: false });
  return { json: json.body, proto };
}

describe('data points as protocol buffers', () => {
  it('carry raw numeric points with statuses, non-finite and missing values, and the series fields', async () => {
    const id = await series({ externalId: 'pb-num', unit: 'bar', isStep: true });
    const datapoints = [
      { timestamp: -5, value: 1.5 },
      { timestamp: 0, value: 0 },
      { timestamp: 2, value: 2, status: { symbol: 'Uncertain' } },
      { timestamp: 3, value: 'NaN', status: { symbol: 'Bad' } },
      { timestamp: 4, value: '-Infinity', status: { code: BAD } },
      { timestamp: 6, status: { code: BAD } },
    ];
    expect((await h.post('/timeseries/data', { items: [{ id, datapoints }] })).status).toBe(200);
    const { json, proto } = await both({ items: [{ id, start: -10, end: 10 }], ignoreBadDataPoints: false, treatUncertainAsBad: false, includeStatus: true });
    const [item] = proto.items;
    expect(item).toMatchObject({ id, externalId: 'pb-num', isStep: true, unit: 'bar', datapointType: 'numericDatapoints' });
    expect(item.isString).toBeUndefined();
    const points = item.numericDatapoints.datapoints;
    expect(points.map((p: any) => p.timestamp ?? 0)).toEqual(json.items[0].datapoints.map((p: any) => p.timestamp));
    expect(points[0].value).toBe(1.5);
    expect(points[1].value).toBeUndefined(); // 0, the proto3 default
    expect(points[2].status).toEqual({ code: json.items[0].datapoints[2].status.code, symbol: 'Uncertain' });
    expect(points[3].value).toBeNaN();
    expect(points[4].value).toBe(-Infinity);
    expect(points[5]).toEqual({ timestamp: 6, nullValue: true, status: { code: BAD, symbol: 'Bad' } });
  });

  it('carry string points, aggregates (also none) and the cursor to page on', async () => {
    const text = await series({ externalId: 'pb-str', isString: true });
    const num = await series({ externalId: 'pb-agg' });
    await h.post('/timeseries/data', { items: [{ id: text, datapoints: [{ timestamp: 1, value: 'on' }, { timestamp: 2, value: '' }] }] });
    await h.post('/timeseries/data', { items: [{ id: num, datapoints: Array.from({ length: 120 }, (_, i) => ({ timestamp: i * 60_000, value: i })) }] });
    const { json, proto } = await both({
      items: [
        { id: text, start: 0, end: 10 },
        { id: num, start: 0, end: 7_200_000, aggregates: ['average', 'count', 'countGood'], granularity: '1h', limit: 1 },
        { id: num, start: 10_000_000, end: 20_000_000, aggregates: ['count'], granularity: '1h' },
      ],
    });
    const [strings, aggregates, none] = proto.items;
    expect(strings).toMatchObject({ id: text, externalId: 'pb-str', isString: true, datapointType: 'stringDatapoints' });
    expect(strings.stringDatapoints.datapoints).toEqual([{ timestamp: 1, value: 'on' }, { timestamp: 2 }]);
    expect(aggregates.datapointType).toBe('aggregateDatapoints');
    // As in JSON, less the fields at the proto3 default (the first bucket's timestamp is 0).
    const withoutZeros = (p: Record<string, number>) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== 0));
    expect(json.items[1].datapoints).toHaveLength(1);
    expect(aggregates.aggregateDatapoints.datapoints).toEqual(json.items[1].datapoints.map(withoutZeros));
    expect(aggregates.aggregateDatapoints.datapoints[0]).toMatchObject({ count: 60, countGood: 60 });
    expect(aggregates.nextCursor).toBe(json.items[1].nextCursor);
    expect(none.datapointType).toBe('aggregateDatapoints');
    expect(none.aggregateDatapoints.datapoints ?? []).toEqual([]);
    const next = await both({ items: [{ id: num, start: 0, end: 7_200_000, aggregates: ['average', 'count', 'countGood'], granularity: '1h', limit: 1, cursor: aggregates.nextCursor }] });
    expect(next.proto.items[0].aggregateDatapoints.datapoints).toEqual(next.json.items[0].datapoints.map(withoutZeros));
    expect(next.proto.items[0].aggregateDatapoints.datapoints[0]).toMatchObject({ timestamp: 3_600_000, count: 60 });
    expect(next.proto.items[0].nextCursor).toBeUndefined();
  });

  it('carry NaN for an aggregate asked for but not defined in a bucket, which JSON leaves out', async () => {
    const id = await series({ externalId: 'pb-undefined' });
    await h.post('/timeseries/data', { items: [{ id, datapoints: [{ timestamp: 0, value: 5 }, { timestamp: 4_200_000, value: 1, status: { code: BAD } }] }] });
    const aggregates = ['average', 'count', 'countBad', 'totalVariation', 'interpolation'];
    const { json, proto } = await both({ items: [{ id, start: 0, end: 7_200_000, aggregates, granularity: '1h' }] });
    expect(json.items[0].datapoints).toEqual([
      { timestamp: 0, average: 5, count: 1, countBad: 0, totalVariation: 0, interpolation: 5 },
      { timestamp: 3_600_000, countBad: 1 },
    ]);
    const [first, second] = proto.items[0].aggregateDatapoints.datapoints;
    // 0 is the proto3 default: left out, read as 0.
    expect(first).toEqual({ average: 5, count: 1, interpolation: 5 });
    expect(second).toEqual({ timestamp: 3_600_000, average: NaN, count: NaN, countBad: 1, totalVariation: NaN, interpolation: NaN });
  });

  it('carry the instance id of a series that has one, retrieved by it', async () => {
    const instanceId = { space: 'pb', externalId: 'pb-inst' };
    const id = await series({ instanceId });
    await h.post('/timeseries/data', { items: [{ instanceId, datapoints: [{ timestamp: 5, value: 7 }] }] });
    const { json, proto } = await both({ items: [{ instanceId, start: 0, end: 10 }] });
    expect(json.items[0]).toMatchObject({ id, instanceId });
    expect(proto.items[0]).toMatchObject({ id, instanceId, numericDatapoints: { datapoints: [{ timestamp: 5, value: 7 }] } });
    expect(proto.items[0].externalId).toBeUndefined();
  });

  it('carry converted values and the target unit when a targetUnit is asked for', async () => {
    const id = await series({ externalId: 'pb-unit', unit: 'degC', unitExternalId: 'temperature:deg_c' });
    await h.post('/timeseries/data', { items: [{ id, datapoints: [{ timestamp: 1, value: -40 }, { timestamp: 2, value: 0 }, { timestamp: 3, value: 100 }] }] });
    const { json, proto } = await both({
      items: [
        { id, start: 0, end: 10, targetUnit: 'temperature:deg_f' },
        { id, start: 0, end: 60_000, aggregates: ['min', 'max', 'sum', 'count'], granularity: '1m', targetUnitSystem: 'SI' },
      ],
    });
    const [raw, aggregates] = proto.items;
    expect(raw).toMatchObject({ id, unitExternalId: 'temperature:deg_f', datapointType: 'numericDatapoints' });
    expect(raw.unit).toBeUndefined();
    const rawValues = raw.numericDatapoints.datapoints.map((p: any) => p.value);
    [-40, 32, 212].forEach((v, i) => expect(rawValues[i]).toBeCloseTo(v, 9));
    expect(rawValues).toEqual(json.items[0].datapoints.map((p: any) => p.value));
    expect(aggregates).toMatchObject({ unitExternalId: 'temperature:k', datapointType: 'aggregateDatapoints' });
    const [bucket] = aggregates.aggregateDatapoints.datapoints;
    expect(bucket).toEqual({ min: expect.closeTo(233.15, 9), max: expect.closeTo(373.15, 9), sum: expect.closeTo(60 + 3 * 273.15, 9), count: 3 });
    expect(bucket).toEqual({ ...json.items[1].datapoints[0], timestamp: undefined });
  });

  it('answer errors in JSON', async () => {
    const headers = { accept: 'application/protobuf' };
    expect(errorMessage(await h.request('POST', '/timeseries/data/list', { items: [{ id: 1, limit: -1 }] }, headers), 400)).toMatch(/limit/);
  });

  it('carry maxDatapoint and minDatapoint as points, with their status, and leave them out of a bucket without points', async () => {
    const id = await series({ externalId: 'pb-extreme' });
    const MINUTE = 60_000;
    const datapoints = [
      { timestamp: 10 * MINUTE, value: 3 },
      { timestamp: 20 * MINUTE, value: -2, status: { symbol: 'Uncertain' } },
      { timestamp: 70 * MINUTE, value: 0 },
    ];
    await h.post('/timeseries/data', { items: [{ id, datapoints }] });
    const aggregates = ['stepInterpolation', 'maxDatapoint', 'minDatapoint'];
    const { json, proto } = await both({ items: [{ id, start: 0, end: 90 * MINUTE, aggregates, granularity: '30m', includeStatus: true, treatUncertainAsBad: false }] });
    const [full, empty, last] = json.items[0].datapoints;
    expect(full.maxDatapoint).toEqual({ timestamp: 10 * MINUTE, value: 3 });
    expect(full.minDatapoint).toMatchObject({ timestamp: 20 * MINUTE, value: -2, status: { symbol: 'Uncertain' } });
    expect(empty).toEqual({ timestamp: 30 * MINUTE, stepInterpolation: -2 });
    expect(last.maxDatapoint).toEqual({ timestamp: 70 * MINUTE, value: 0 });
    const [pFull, pEmpty, pLast] = proto.items[0].aggregateDatapoints.datapoints;
    // stepInterpolation is NaN where JSON leaves it out; 0, the proto3 default, is left out of a point as of any message.
    expect(pFull).toEqual({ stepInterpolation: NaN, maxDatapoint: full.maxDatapoint, minDatapoint: full.minDatapoint });
    expect(pEmpty).toEqual(empty);
    expect(pLast).toEqual({ timestamp: 60 * MINUTE, stepInterpolation: -2, maxDatapoint: { timestamp: 70 * MINUTE }, minDatapoint: { timestamp: 70 * MINUTE } });
  });
});

describe('inserts as protocol buffers', () => {
  const encode = (items: object[]) => Buffer.from(InsertionRequest.encode(InsertionRequest.fromObject({ items })).finish());
  const insert = (body: Buffer, headers: Record<string, string> = {}) =>
    h.request('POST', '/timeseries/data', body, { 'content-type': 'application/protobuf', ...headers });
  const read = async (ref: object) => {
    const res = await h.post('/timeseries/data/list', { items: [{ ...ref, start: -10_000, end: 10_000, includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: false }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.items[0].datapoints;
  };

  it('stores numeric and string points by id, external id and instance id, with statuses and missing values', async () => {
    const num = await series({ externalId: 'pb-in-num' });
    await series({ externalId: 'pb-in-str', isString: true });
    await series({ externalId: 'pb-in-dm', instanceId: { space: 'sp', externalId: 'pb-in-dm' } });
    const body = encode([
      {
        id: num,
        numericDatapoints: {
          datapoints: [
            { timestamp: -5, value: 1.5 },
            // Value and timestamp at the proto3 default (0), a status message at its default (Good).
            { status: {} },
            { timestamp: 2, value: 2, status: { symbol: 'Uncertain' } },
            { timestamp: 3, value: NaN, status: { code: BAD } },
            { timestamp: 4, nullValue: true, status: { code: BAD, symbol: 'Bad' } },
          ],
        },
      },
      { externalId: 'pb-in-str', stringDatapoints: { datapoints: [{ timestamp: 1, value: 'on' }, { timestamp: 2 }] } },
      { instanceId: { space: 'sp', externalId: 'pb-in-dm' }, numericDatapoints: { datapoints: [{ timestamp: 7, value: -3 }] } },
    ]);
    const res = await insert(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({});
    expect(await read({ id: num })).toEqual([
      { timestamp: -5, value: 1.5 },
      { timestamp: 0, value: 0 },
      { timestamp: 2, value: 2, status: { code: 0x40000000, symbol: 'Uncertain' } },
      { timestamp: 3, value: 'NaN', status: { code: BAD, symbol: 'Bad' } },
      { timestamp: 4, status: { code: BAD, symbol: 'Bad' } },
    ]);
    expect(await read({ externalId: 'pb-in-str' })).toEqual([
      { timestamp: 1, value: 'on' },
      { timestamp: 2, value: '' },
    ]);
    expect(await read({ instanceId: { space: 'sp', externalId: 'pb-in-dm' } })).toEqual([{ timestamp: 7, value: -3 }]);
    // Compressed, and under the older media type.
    const again = await insert(gzipSync(encode([{ id: num, numericDatapoints: { datapoints: [{ timestamp: 9, value: 9 }] } }])), {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await read({ id: num })).at(-1)).toEqual({ timestamp: 9, value: 9 });
  });

  it('checks what it decodes as it checks JSON, and stores nothing of a refused request', async () => {
    const num = await series({ externalId: 'pb-in-check' });
    const other = await series({ externalId: 'pb-in-other' });
    const twice = await insert(encode([{ id: num, numericDatapoints: { datapoints: [{ timestamp: 1, value: 1 }] } }, { externalId: 'pb-in-check', numericDatapoints: { datapoints: [{ timestamp: 2, value: 2 }] } }]));
    expect(errorMessage(twice, 422)).toMatch(/more than once/);
    expect(twice.body.error.duplicated).toEqual([{ externalId: 'pb-in-check' }]);
    const cases: Array<[object[], RegExp]> = [
      [[{ id: num, numericDatapoints: { datapoints: [{ timestamp: 1, value: NaN }] } }], /items\[1\]\.datapoints\[0\]\.value: "NaN" is allowed only on a point with a Bad status/],
      [[{ id: num, numericDatapoints: { datapoints: [{ timestamp: 1, nullValue: true }] } }], /items\[1\]\.datapoints\[0\]\.value: missing/],
      [[{ id: num, numericDatapoints: { datapoints: [{ timestamp: 5_000_000_000_000, value: 1 }] } }], /items\[1\]\.datapoints\[0\]\.timestamp: must be from/],
      [[{ id: num, stringDatapoints: { datapoints: [{ timestamp: 1, value: 'x' }] } }], /items\[1\]\.datapoints\[0\]\.value: .* is numeric/],
      [[{ id: num, numericDatapoints: { datapoints: [{ timestamp: 1, value: 1, status: { code: 3 } }] } }], /items\[1\]\.datapoints\[0\]\.status\.code/],
      [[{ numericDatapoints: { datapoints: [{ timestamp: 1, value: 1 }] } }], /items\[1\]/],
      [[{ id: num, stateDatapoints: { datapoints: [{ timestamp: 1, numericValue: 1 }] } }], /items\[1\]\.stateDatapoints: state time series are not supported/],
      [[{ externalId: 'pb-in-nope', numericDatapoints: { datapoints: [{ timestamp: 1, value: 1 }] } }], /pb-in-nope/],
    ];
    for (const [items, message] of cases) {
      const res = await insert(encode([{ id: other, numericDatapoints: { datapoints: [{ timestamp: 100, value: 100 }] } }, ...items]));
      expect(errorMessage(res, 400), JSON.stringify(items)).toMatch(message);
    }
    expect(await read({ id: num })).toEqual([]);
    expect(await read({ id: other })).toEqual([]);
  });

  it('refuses bytes that are not the message, and protocol buffers where an operation takes JSON only', async () => {
    for (const bytes of [Buffer.from([0x0a, 0x05, 0x08]), Buffer.from([0x0a, 0x02, 0x0a, 0x09]), Buffer.from([0x0a, 0x02, 0x11, 0x01]), Buffer.from('{"items": []}')]) {
      expect(errorMessage(await insert(bytes), 400), bytes.toString('hex')).toMatch(/^The request body is not a DataPointInsertionRequest in protocol buffers: /);
    }
    expect(errorMessage(await insert(Buffer.alloc(0)), 400)).toMatch(/items: must have at least 1 item/);
    const events = await h.request('POST', '/events', encode([]), { 'content-type': 'application/protobuf' });
    expect(errorMessage(events, 415)).toBe(`POST ${h.base}/events takes JSON, and the body came as protocol buffers; send it with "Content-Type: application/json"`);
  });
});
