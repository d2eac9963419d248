/**
 * Data point lists as protocol buffers, for clients that ask with `Accept: application/protobuf`: the
 * official Python SDK reads data points only so. The messages and field numbers are those of the service's
 * published schema (`DataPointListResponse`, `DataPointListItem` and the data point messages). proto3 rules:
 * a field at its default (0, "", false) is left out; which kind of data points an item holds is a oneof,
 * written even when empty, so a client can tell an empty aggregate list from an empty raw one.
 */
import protobuf from 'protobufjs/minimal.js';
import { badRequest } from '../../http/errors.js';
import type { RawPoint } from './raw-query.js';

export const PROTOBUF_TYPE = 'application/protobuf';

/** Whether an `Accept` header asks for protocol buffers (`application/protobuf`, or the older `application/x-protobuf`). */
export function acceptsProtobuf(accept: string | undefined): boolean {
  return accept !== undefined && /\bapplication\/(x-)?protobuf\b/i.test(accept);
}

/** What one response item holds, as the JSON form has it (series fields, `datapoints`, `nextCursor`). */
export interface ProtoItem {
  kind: 'numeric' | 'string' | 'aggregate';
  head: Record<string, unknown>;
  datapoints: unknown[];
  nextCursor?: string;
}

const ITEM = { id: 1, externalId: 2, numeric: 3, string: 4, aggregate: 5, isString: 6, isStep: 7, unit: 8, nextCursor: 9, unitExternalId: 10 };
const AGGREGATE_FIELDS: Readonly<Record<string, number>> = {
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

function writeItem(w: protobuf.Writer, { kind, head, datapoints, nextCursor }: ProtoItem): void {
  w.uint32(tag(ITEM.id, 0)).int64(head.id as number);
  str(w, ITEM.externalId, head.externalId);
  w.uint32(tag(ITEM[kind], 2)).fork();
  for (const p of datapoints) {
    w.uint32(tag(1, 2)).fork();
    if (kind === 'aggregate') writeAggregate(w, p as Record<string, unknown>);
    else writePoint(w, p as RawPoint, kind);
    w.ldelim();
  }
  w.ldelim();
  if (head.isString) w.uint32(tag(ITEM.isString, 0)).bool(true);
  if (head.isStep) w.uint32(tag(ITEM.isStep, 0)).bool(true);
  str(w, ITEM.unit, head.unit);
  str(w, ITEM.nextCursor, nextCursor);
  str(w, ITEM.unitExternalId, head.unitExternalId);
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

/** `AggregateDatapoint`: timestamp 1, then one double per aggregate. */
function writeAggregate(w: protobuf.Writer, p: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(p)) {
    if (key === 'timestamp') {
      if (value !== 0) w.uint32(tag(1, 0)).int64(value as number);
      continue;
    }
    const field = AGGREGATE_FIELDS[key];
    if (field === undefined) throw badRequest(`aggregates: ${key} has no protocol buffers form; ask for it with "Accept: application/json"`);
    if (value !== 0) w.uint32(tag(field, 1)).double(value as number);
  }
}

function str(w: protobuf.Writer, field: number, value: unknown): void {
  if (typeof value === 'string' && value !== '') w.uint32(tag(field, 2)).string(value);
}
