/**
 * Data points as protocol buffers: lists for clients that ask with `Accept: application/protobuf` (the
 * official Python SDK reads data points only so), and inserts sent with `Content-Type: application/protobuf`.
 * The messages and field numbers are those of the service's published schema (`DataPointListResponse`,
 * `DataPointInsertionRequest` and the data point messages). proto3 rules: a field at its default (0, "",
 * false) is left out; which kind of data points an item holds is a oneof, written even when empty, so a
 * client can tell an empty aggregate list from an empty raw one. A numeric aggregate asked for but not
 * defined in a bucket is NaN: left out, a reader would take it for 0. `maxDatapoint` and `minDatapoint` are
 * messages, left out where the bucket has no point (a reader sees the message is absent).
 */
import protobuf from 'protobufjs/minimal.js';
import { ApiError, badRequest } from '../../http/errors.js';
import type { RawPoint } from './raw-query.js';
import type { AggregateName } from './schema.js';

export const PROTOBUF_TYPE = 'application/protobuf';

/** Whether an `Accept` header asks for protocol buffers (`application/protobuf`, or the older `application/x-protobuf`). */
export function acceptsProtobuf(accept: string | undefined): boolean {
  return accept !== undefined && /\bapplication\/(x-)?protobuf\b/i.test(accept);
}

/** What one response item holds, as the JSON form has it (series fields, `datapoints`, `nextCursor`), and the aggregates asked for. */
export interface ProtoItem {
  kind: 'numeric' | 'string' | 'aggregate';
  head: Record<string, unknown>;
  datapoints: unknown[];
  nextCursor?: string;
  aggregates?: readonly AggregateName[];
}

const ITEM = { id: 1, externalId: 2, numeric: 3, string: 4, aggregate: 5, isString: 6, isStep: 7, unit: 8, nextCursor: 9, unitExternalId: 10, instanceId: 11 };
type PointAggregate = 'maxDatapoint' | 'minDatapoint';
/** The aggregates that are a number, each a double. */
const AGGREGATE_FIELDS: Readonly<Record<Exclude<AggregateName, PointAggregate>, number>> = {
  average: 2,
  max: 3,
  min: 4,
  count: 5,
  sum: 6,
  interpolation: 7,
  stepInterpolation: 8,
  continuousVariance: 9,
  discreteVariance: 10,
  totalVariation: 11,
  countGood: 12,
  countUncertain: 13,
  countBad: 14,
  durationGood: 15,
  durationUncertain: 16,
  durationBad: 17,
};
/** The aggregates that are a point of the bucket, each a `NumericDatapoint`; left out where the bucket has none. */
const POINT_AGGREGATE_FIELDS: Readonly<Record<PointAggregate, number>> = { maxDatapoint: 18, minDatapoint: 19 };
const isPointAggregate = (name: AggregateName): name is PointAggregate => name in POINT_AGGREGATE_FIELDS;

// Wire types: 0 varint, 1 fixed 64-bit, 2 length-delimited.
const tag = (field: number, wire: number) => (field << 3) | wire;

/** `DataPointListResponse` with one `DataPointListItem` per item. */
export function encodeDatapointList(items: readonly ProtoItem[]): Buffer {
  const w = protobuf.Writer.create();
  for (const item of items) {
    w.uint32(tag(1, 2)).fork();
    writeItem(w, item);
    w.ldelim();
  }
  const bytes = w.finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function writeItem(w: protobuf.Writer, { kind, head, datapoints, nextCursor, aggregates = [] }: ProtoItem): void {
  w.uint32(tag(ITEM.id, 0)).int64(head.id as number);
  str(w, ITEM.externalId, head.externalId);
  w.uint32(tag(ITEM[kind], 2)).fork();
  for (const p of datapoints) {
    w.uint32(tag(1, 2)).fork();
    if (kind === 'aggregate') writeAggregate(w, p as Record<string, unknown>, aggregates);
    else writePoint(w, p as RawPoint, kind);
    w.ldelim();
  }
  w.ldelim();
  if (head.isString) w.uint32(tag(ITEM.isString, 0)).bool(true);
  if (head.isStep) w.uint32(tag(ITEM.isStep, 0)).bool(true);
  str(w, ITEM.unit, head.unit);
  str(w, ITEM.nextCursor, nextCursor);
  str(w, ITEM.unitExternalId, head.unitExternalId);
  const instanceId = head.instanceId as { space: string; externalId: string } | undefined;
  if (instanceId) {
    // `InstanceId`: space 1, externalId 2.
    w.uint32(tag(ITEM.instanceId, 2)).fork();
    str(w, 1, instanceId.space);
    str(w, 2, instanceId.externalId);
    w.ldelim();
  }
}

/** `NumericDatapoint` or `StringDatapoint`: timestamp 1, value 2, status 3, nullValue 4. */
function writePoint(w: protobuf.Writer, p: RawPoint, kind: 'numeric' | 'string'): void {
  if (p.timestamp !== 0) w.uint32(tag(1, 0)).int64(p.timestamp);
  if (p.value === undefined) {
    w.uint32(tag(4, 0)).bool(true);
  } else if (kind === 'numeric') {
    // JSON carries a bad point's non-finite value as a string; the binary form has the double itself.
    const v = typeof p.value === 'string' ? Number(p.value) : p.value;
    if (!Object.is(v, 0)) w.uint32(tag(2, 1)).double(v);
  } else {
    str(w, 2, p.value);
  }
  if (p.status && (p.status.code !== 0 || p.status.symbol)) {
    w.uint32(tag(3, 2)).fork();
    if (p.status.code !== 0) w.uint32(tag(1, 0)).int64(p.status.code);
    str(w, 2, p.status.symbol);
    w.ldelim();
  }
}

/** `AggregateDatapoint`: timestamp 1, then one double per aggregate asked for, or the point it names. */
function writeAggregate(w: protobuf.Writer, p: Record<string, unknown>, aggregates: readonly AggregateName[]): void {
  const timestamp = p.timestamp as number;
  if (timestamp !== 0) w.uint32(tag(1, 0)).int64(timestamp);
  for (const name of aggregates) {
    if (isPointAggregate(name)) {
      if (p[name] === undefined) continue;
      w.uint32(tag(POINT_AGGREGATE_FIELDS[name], 2)).fork();
      writePoint(w, p[name] as RawPoint, 'numeric');
      w.ldelim();
    } else {
      const value = name in p ? (p[name] as number) : NaN;
      if (value !== 0) w.uint32(tag(AGGREGATE_FIELDS[name], 1)).double(value);
    }
  }
}

function str(w: protobuf.Writer, field: number, value: unknown): void {
  if (typeof value === 'string' && value !== '') w.uint32(tag(field, 2)).string(value);
}

const INSERT_ITEM = { id: 1, externalId: 2, numeric: 3, string: 4, instanceId: 5, state: 6 };
const WIRE_NAMES = ['varint', '64-bit', 'length-delimited', 'start group', 'end group', '32-bit'];

/**
 * A `DataPointInsertionRequest` as the JSON body of the same insert, so the schema and the insert's checks
 * judge both forms alike: a point's `nullValue` is a point without a value, a non-finite double is the JSON
 * spelling of that value (`"NaN"`), and a status message with neither field is Good (code 0).
 */
export function decodeInsertionRequest(bytes: Uint8Array): { items: Array<Record<string, unknown>> } {
  const r = protobuf.Reader.create(bytes);
  const items: Array<Record<string, unknown>> = [];
  try {
    readFields(r, r.len, (field, wire) => {
      if (field !== 1) return false;
      expectWire(wire, 2, 'items');
      items.push(readInsertItem(r, r.uint32() + r.pos, items.length));
      return true;
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw badRequest(`The request body is not a DataPointInsertionRequest in protocol buffers: ${(err as Error).message}`);
  }
  return { items };
}

/** Reads the fields of one message up to `end`; `read` takes a field it knows (true) or leaves it to be skipped. */
function readFields(r: protobuf.Reader, end: number, read: (field: number, wire: number) => boolean): void {
  while (r.pos < end) {
    const key = r.uint32();
    const field = key >>> 3;
    const wire = key & 7;
    if (!read(field, wire)) r.skipType(wire);
  }
  if (r.pos !== end) throw new Error('a message runs past its end');
}

function expectWire(wire: number, expected: number, where: string): void {
  if (wire !== expected) badProto(`${where}: expected a ${WIRE_NAMES[expected]} field, got ${WIRE_NAMES[wire] ?? `wire type ${wire}`}`);
}

function badProto(message: string): never {
  throw badRequest(`The request body is not a DataPointInsertionRequest in protocol buffers: ${message}`);
}

function int64(r: protobuf.Reader): number {
  const v = r.int64() as number | protobuf.Long;
  return typeof v === 'number' ? v : protobuf.util.LongBits.from(v).toNumber();
}

function readInsertItem(r: protobuf.Reader, end: number, i: number): Record<string, unknown> {
  const where = `items[${i}]`;
  const item: Record<string, unknown> = {};
  // An item without a data points field inserts nothing, as `"datapoints": []` does.
  let datapoints: unknown[] = [];
  readFields(r, end, (field, wire) => {
    switch (field) {
      case INSERT_ITEM.id:
        expectWire(wire, 0, `${where}.id`);
        item.id = int64(r);
        return true;
      case INSERT_ITEM.externalId:
        expectWire(wire, 2, `${where}.externalId`);
        item.externalId = r.string();
        return true;
      case INSERT_ITEM.instanceId:
        expectWire(wire, 2, `${where}.instanceId`);
        item.instanceId = readInstanceId(r, r.uint32() + r.pos, `${where}.instanceId`);
        return true;
      case INSERT_ITEM.numeric:
      case INSERT_ITEM.string: {
        const kind = field === INSERT_ITEM.numeric ? 'numeric' : 'string';
        expectWire(wire, 2, `${where}.${kind}Datapoints`);
        datapoints = readPointList(r, r.uint32() + r.pos, kind, `${where}.datapoints`);
        return true;
      }
      case INSERT_ITEM.state:
        throw badRequest(`${where}.stateDatapoints: state time series are not supported; send numericDatapoints or stringDatapoints`);
      default:
        return false;
    }
  });
  return { ...item, datapoints };
}

function readInstanceId(r: protobuf.Reader, end: number, where: string): Record<string, string> {
  const id: Record<string, string> = { space: '', externalId: '' };
  readFields(r, end, (field, wire) => {
    if (field !== 1 && field !== 2) return false;
    const name = field === 1 ? 'space' : 'externalId';
    expectWire(wire, 2, `${where}.${name}`);
    id[name] = r.string();
    return true;
  });
  return id;
}

/** `NumericDatapoints` or `StringDatapoints`: repeated field 1. */
function readPointList(r: protobuf.Reader, end: number, kind: 'numeric' | 'string', where: string): unknown[] {
  const points: unknown[] = [];
  readFields(r, end, (field, wire) => {
    if (field !== 1) return false;
    expectWire(wire, 2, `${where}[${points.length}]`);
    points.push(readPoint(r, r.uint32() + r.pos, kind, `${where}[${points.length}]`));
    return true;
  });
  return points;
}

/** `NumericDatapoint` or `StringDatapoint`: timestamp 1, value 2, status 3, nullValue 4. */
function readPoint(r: protobuf.Reader, end: number, kind: 'numeric' | 'string', where: string): Record<string, unknown> {
  let timestamp = 0;
  let value: number | string = kind === 'numeric' ? 0 : '';
  let status: Record<string, unknown> | undefined;
  let nullValue = false;
  readFields(r, end, (field, wire) => {
    switch (field) {
      case 1:
        expectWire(wire, 0, `${where}.timestamp`);
        timestamp = int64(r);
        return true;
      case 2:
        expectWire(wire, kind === 'numeric' ? 1 : 2, `${where}.value`);
        value = kind === 'numeric' ? r.double() : r.string();
        return true;
      case 3:
        expectWire(wire, 2, `${where}.status`);
        status = readStatus(r, r.uint32() + r.pos, `${where}.status`);
        return true;
      case 4:
        expectWire(wire, 0, `${where}.nullValue`);
        nullValue = r.bool();
        return true;
      default:
        return false;
    }
  });
  const point: Record<string, unknown> = { timestamp };
  if (!nullValue) point.value = typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
  if (status) point.status = status;
  return point;
}

function readStatus(r: protobuf.Reader, end: number, where: string): Record<string, unknown> {
  const status: Record<string, unknown> = {};
  readFields(r, end, (field, wire) => {
    if (field === 1) {
      expectWire(wire, 0, `${where}.code`);
      status.code = int64(r);
    } else if (field === 2) {
      expectWire(wire, 2, `${where}.symbol`);
      status.symbol = r.string();
    } else return false;
    return true;
  });
  return status.code === undefined && status.symbol === undefined ? { code: 0 } : status;
}
