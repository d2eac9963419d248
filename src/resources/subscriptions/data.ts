/**
 * Listing a subscription's data (`POST /timeseries/subscriptions/data/list`): the changes of its partitions
 * after their cursors, in the order they were committed (change-log.ts). A page takes whole recordings,
 * partition after partition, while they fit in `limit` results; a recording is never split, so one larger
 * than the limit comes alone. Each partition's `nextCursor` continues where the page ended, and reading a
 * chain of cursors gives every committed change once.
 *
 * With `pollTimeoutSeconds`, a page with nothing to give waits for the subscription's next change, up to
 * that long: the request holds no connection while it waits (storage/changes.ts), and a write in any
 * process sharing the database ends the wait. Changes of series the request does not see are passed over.
 */
import { inScope } from '../../auth/access.js';
import { badRequest, formatPath, missingItems } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { visibleAccess } from '../../query/visibility.js';
import { decodeChunk } from '../datapoints/chunk-codec.js';
import { blockPoint, type RawPoint } from '../datapoints/raw-query.js';
import { parseTime } from '../../query/time-spec.js';
import { shownBy, treatmentOf } from '../datapoints/treatment.js';
import { timeSeriesCatalog } from '../timeseries/model.js';
import {
  changesBetween,
  deletedRanges,
  KIND,
  lastLogPosition,
  positionBefore,
  positionsAfter,
  subscriptionChange,
  type ChangeRow,
  type Partition,
} from './change-log.js';
import type { Definition } from './membership.js';
import { SUBSCRIPTION_LIMITS as L } from './model.js';
import type { ListDataBody } from './schema.js';
import { subscriptionNamed } from './service.js';

interface SeriesOut {
  id: number;
  externalId?: string;
  instanceId?: { space: string; externalId: string };
  isString: boolean;
  type: 'numeric' | 'string';
}

interface Update {
  timeSeries: SeriesOut;
  upserts: RawPoint[];
  deletes: Array<{ inclusiveBegin: number; exclusiveEnd: number }>;
}

export interface DataPage {
  updates: Update[];
  subscriptionChanges: { added: SeriesOut[]; removed: SeriesOut[] };
  partitions: Array<{ index: number; nextCursor: string }>;
  hasNext: boolean;
}

interface Stream {
  index: number;
  /** The position the partition has been read up to. */
  after: number;
}

const binding = (sub: Definition, index: number) => ({ op: 'subscriptions/data', subscription: sub.id, partition: index });

function decodeCursor(services: Services, cursor: string, sub: Definition, index: number, where: string): number {
  let state: unknown;
  try {
    state = services.cursors.decode(cursor, binding(sub, index));
  } catch (err) {
    throw badRequest(`${where}: ${(err as Error).message.replace(/^cursor: /, '')} (a cursor continues the partition and subscription that gave it)`);
  }
  const pos = (state as { pos?: unknown } | null)?.pos;
  if (typeof pos !== 'number' || !Number.isSafeInteger(pos) || pos < 0) throw badRequest(`${where}: not a cursor issued by this server`);
  return pos;
}

/** Where each partition asked for starts: its cursor, or `initializeCursors`, or the beginning. */
async function startOf(services: Services, projectId: number, sub: Definition, body: ListDataBody): Promise<Stream[]> {
  const seen = new Set<number>();
  const initial = body.initializeCursors === undefined ? undefined : body.initializeCursors.trim() === 'now' ? 'now' : parseTime(body.initializeCursors, services.now(), 'initializeCursors');
  const streams: Stream[] = [];
  for (const [i, p] of body.partitions.entries()) {
    const where = formatPath(['partitions', i]);
    if (p.index >= sub.partitionCount) throw badRequest(`${where}.index: the subscription has ${sub.partitionCount} partition${sub.partitionCount === 1 ? '' : 's'}, numbered from 0; got ${p.index}`);
    if (seen.has(p.index)) throw badRequest(`${where}.index: partition ${p.index} is asked for twice`);
    seen.add(p.index);
    let after = 0;
    if (p.cursor != null) after = decodeCursor(services, p.cursor, sub, p.index, `${where}.cursor`);
    else if (initial === 'now') after = await lastLogPosition(services.db, projectId);
    else if (initial !== undefined) after = await positionBefore(services.db, { projectId, subscriptionId: sub.id, part: p.index }, initial);
    streams.push({ index: p.index, after });
  }
  return streams;
}

function seriesOut(r: ChangeRow): SeriesOut {
  const isString = r.is_string === 1;
  return {
    id: r.series_id,
    ...(r.external_id !== null ? { externalId: r.external_id } : {}),
    ...(r.instance_space !== null ? { instanceId: { space: r.instance_space, externalId: r.instance_external_id! } } : {}),
    isString,
    type: isString ? 'string' : 'numeric',
  };
}

/** A page of the streams, and where each now stands; `consumed` when any of them moved. */
async function readPage(services: Services, projectId: number, sub: Definition, streams: readonly Stream[], body: ListDataBody) {
  const { db } = services;
  const visible = visibleAccess(services, timeSeriesCatalog);
  const shown = shownBy(treatmentOf(body));
  const includeStatus = body.includeStatus ?? false;
  let remaining = body.limit ?? L.defaultDataLimit;
  let results = 0;
  let hasNext = false;
  const rows: ChangeRow[] = [];
  const next: Stream[] = [];
  for (const s of streams) {
    const partition: Partition = { projectId, subscriptionId: sub.id, part: s.index };
    const positions = await positionsAfter(db, partition, s.after, Math.max(remaining, 0) + 1);
    let upTo = s.after;
    let taken = 0;
    for (const p of positions) {
      // A recording larger than the limit comes alone; others come while they fit.
      if (results > 0 && p.n > remaining) break;
      upTo = p.pos;
      remaining -= p.n;
      results += p.n;
      taken++;
    }
    if (taken < positions.length) hasNext = true;
    if (taken > 0) rows.push(...(await changesBetween(db, partition, s.after, upTo, visible?.memberOf)));
    next.push({ index: s.index, after: upTo });
  }
  rows.sort((a, b) => a.pos - b.pos || a.series_id - b.series_id || a.kind - b.kind);
  const page: Omit<DataPage, 'partitions' | 'hasNext'> = { updates: [], subscriptionChanges: { added: [], removed: [] } };
  for (const r of rows) {
    if (!inScope(visible, { id: r.series_id, dataSetId: r.data_set_id })) continue;
    if (r.kind === KIND.added || r.kind === KIND.removed) {
      page.subscriptionChanges[r.kind === KIND.added ? 'added' : 'removed'].push(seriesOut(r));
    } else if (r.kind === KIND.delete) {
      page.updates.push({ timeSeries: seriesOut(r), upserts: [], deletes: deletedRanges(r.data!).map(([inclusiveBegin, exclusiveEnd]) => ({ inclusiveBegin, exclusiveEnd })) });
    } else {
      const block = decodeChunk(r.data!);
      const upserts: RawPoint[] = [];
      for (let i = 0; i < block.n; i++) {
        const code = block.codes ? block.codes[i] : 0;
        if (shown(code)) upserts.push(blockPoint(block, i, code, includeStatus));
      }
      if (upserts.length) page.updates.push({ timeSeries: seriesOut(r), upserts, deletes: [] });
    }
  }
  const consumed = next.some((s, i) => s.after !== streams[i].after);
  return { page, next, hasNext, consumed };
}

export async function listSubscriptionData(services: Services, projectId: number, body: ListDataBody, signal: AbortSignal): Promise<DataPage> {
  const sub = await subscriptionNamed(services, projectId, body.externalId);
  const streams = await startOf(services, projectId, sub, body);
  const deadline = services.now() + (body.pollTimeoutSeconds ?? L.maxPollSeconds) * 1000;
  for (;;) {
    // Watch before reading: a change committed after the read still ends the wait.
    const watch = services.changes?.watch(subscriptionChange(projectId, sub.id));
    try {
      const { page, next, hasNext, consumed } = await readPage(services, projectId, sub, streams, body);
      const outcome = consumed || !watch ? 'read' : await watch.wait({ deadline, signal });
      if (outcome !== 'changed') {
        return { ...page, partitions: next.map((s) => ({ index: s.index, nextCursor: services.cursors.encode({ pos: s.after }, binding(sub, s.index)) })), hasNext };
      }
    } finally {
      watch?.close();
    }
    // The change may have been the subscription's deletion (and another taking its external id).
    if ((await subscriptionNamed(services, projectId, body.externalId)).id !== sub.id) throw missingItems([{ externalId: body.externalId }]);
  }
}
