/**
 * Streams: created from a template, listed, read (with what they hold against their limits), and deleted.
 * Deleting a stream hides it and frees its identifier at once; a job then purges its records in batches, so
 * that no request waits for, or holds the database while, a large stream is emptied.
 */
import type { AreaRuntime } from '../../http/area.js';
import { ApiError, duplicatedItems, badRequest, notFound } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { allocateIds } from '../../storage/ids.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Reader } from '../../storage/read-pool.js';
import type { Queryable } from '../../storage/store.js';
import { createStreamPartition, dropExpiredPartitions, dropStreamPartition } from './partitions.js';
import { streamsSettings } from './settings.js';
import type { CreateStreamsBody } from './schema.js';
import { RECORD_STATE } from './tables.js';
import { isoDurationMs, templateNamed, type StreamTemplate, type StreamType } from './templates.js';

/** The settings a stream keeps from its template, in their read form (without what is consumed). */
export interface StreamSettings {
  lifecycle: { retainedAfterSoftDelete: string; dataDeletedAfter?: string };
  limits: { maxRecordsTotal: { provisioned: number }; maxGigaBytesTotal: { provisioned: number }; maxFilteringInterval?: string };
}

/** A live stream as the records operations use it. */
export interface Stream {
  id: number;
  externalId: string;
  type: StreamType;
  settings: StreamSettings;
  /** How long records are kept, and the longest span one read of an immutable stream may cover (ms). */
  retentionMs?: number;
  maxFilteringMs?: number;
}

interface StreamRow {
  id: number;
  external_id: string;
  template: string;
  mutable: number;
  settings: string;
  created_time: number;
  record_count: number;
  bytes: number;
}

const COLUMNS = sql`id, external_id, template, mutable, settings, created_time, record_count, bytes`;
const GIGABYTE = 1e9;

/** Identifiers the reference keeps for itself. */
const RESERVED_PREFIXES = ['cdf_', 'cognite_'];
const RESERVED_IDS = ['logs', 'records'];

export const PURGE_JOB = 'streams.purge';
export const RETENTION_JOB = 'streams.retention';
const RETENTION_SCHEDULE = 'streams-retention';
/** Records deleted per statement by the purge and retention jobs. */
const PURGE_BATCH = 5000;

function settingsOf(t: StreamTemplate): StreamSettings {
  return {
    lifecycle: { retainedAfterSoftDelete: t.retainedAfterSoftDelete, ...(t.dataDeletedAfter ? { dataDeletedAfter: t.dataDeletedAfter } : {}) },
    limits: {
      maxRecordsTotal: { provisioned: t.maxRecordsTotal },
      maxGigaBytesTotal: { provisioned: t.maxGigaBytesTotal },
      ...(t.maxFilteringInterval ? { maxFilteringInterval: t.maxFilteringInterval } : {}),
    },
  };
}

function streamOf(row: StreamRow): Stream {
  const settings = JSON.parse(row.settings) as StreamSettings;
  const retention = settings.lifecycle.dataDeletedAfter;
  const filtering = settings.limits.maxFilteringInterval;
  return {
    id: Number(row.id),
    externalId: row.external_id,
    type: row.mutable ? 'Mutable' : 'Immutable',
    settings,
    ...(retention ? { retentionMs: isoDurationMs(retention) } : {}),
    ...(filtering ? { maxFilteringMs: isoDurationMs(filtering) } : {}),
  };
}

function readForm(row: StreamRow, statistics = false): Record<string, unknown> {
  const stream = streamOf(row);
  const { lifecycle, limits } = stream.settings;
  return {
    externalId: row.external_id,
    createdTime: Number(row.created_time),
    createdFromTemplate: row.template,
    type: stream.type,
    settings: {
      lifecycle,
      limits: statistics
        ? {
            ...limits,
            maxRecordsTotal: { ...limits.maxRecordsTotal, consumed: Number(row.record_count) },
            maxGigaBytesTotal: { ...limits.maxGigaBytesTotal, consumed: Number(row.bytes) / GIGABYTE },
          }
        : limits,
    },
  };
}

export async function createStreams(services: Services, projectId: number, body: CreateStreamsBody) {
  const templates = streamsSettings(services).templates;
  const items = body.items.map((item, i) => {
    const id = item.externalId;
    if (RESERVED_PREFIXES.some((p) => id.startsWith(p)) || RESERVED_IDS.includes(id)) {
      throw badRequest(`items[${i}].externalId: ${JSON.stringify(id)} is reserved (stream identifiers cannot start with ${RESERVED_PREFIXES.join(' or ')}, or be ${RESERVED_IDS.join(' or ')})`);
    }
    return { item, template: templateNamed(templates, item.settings.template.name, `items[${i}].settings.template.name`) };
  });
  const now = services.now();
  const rows = await services.db.transaction(async (tx) => {
    const taken = await tx.all<{ external_id: string }>(
      sql`SELECT external_id FROM streams WHERE project_id = ${projectId} AND deleted_time IS NULL AND external_id IN (${items.map((x) => x.item.externalId)})`,
    );
    if (taken.length > 0) throw duplicatedItems(taken.map((t) => ({ externalId: t.external_id })));
    const ids = await allocateIds(tx, 'streams', items.length);
    const out: StreamRow[] = [];
    for (const [i, { item, template }] of items.entries()) {
      const row = {
        id: ids[i],
        external_id: item.externalId,
        template: item.settings.template.name,
        mutable: template.type === 'Mutable' ? 1 : 0,
        settings: JSON.stringify(settingsOf(template)),
        created_time: now,
        record_count: 0,
        bytes: 0,
      };
      await tx.run(sql`INSERT INTO streams (id, project_id, external_id, template, mutable, settings, created_time)
        VALUES (${row.id}, ${projectId}, ${row.external_id}, ${row.template}, ${row.mutable}, ${row.settings}, ${now})`);
      await createStreamPartition(tx, row.id, row.mutable === 1);
      out.push(row);
    }
    // Expired records and old tombstones are purged every quarter of an hour (reads leave them out before).
    const payload = { tombstoneRetentionMs: streamsSettings(services).tombstoneRetentionMs };
    await services.jobs?.schedule(tx, { projectId, name: RETENTION_SCHEDULE, kind: RETENTION_JOB, cron: '*/15 * * * *', payload });
    return out;
  });
  return { items: rows.map((r) => readForm(r)) };
}

export async function listStreams(services: Services, projectId: number) {
  const rows = await services.reads.all<StreamRow>(sql`SELECT ${COLUMNS} FROM streams WHERE project_id = ${projectId} AND deleted_time IS NULL ORDER BY created_time, id`);
  return { items: rows.map((r) => readForm(r)) };
}

const noStream = (externalId: string) => notFound(`The stream ${JSON.stringify(externalId)} does not exist`);

async function liveStreamRow(reads: Reader, projectId: number, externalId: string): Promise<StreamRow> {
  const [row] = await reads.all<StreamRow>(sql`SELECT ${COLUMNS} FROM streams WHERE project_id = ${projectId} AND external_id = ${externalId} AND deleted_time IS NULL`);
  if (!row) throw noStream(externalId);
  return row;
}

export async function retrieveStream(services: Services, projectId: number, externalId: string, includeStatistics: boolean) {
  return readForm(await liveStreamRow(services.reads, projectId, externalId), includeStatistics);
}

/** A live stream by its identifier, for a read; a 404 when there is none. */
export async function readableStream(reads: Reader, projectId: number, externalId: string): Promise<Stream> {
  return streamOf(await liveStreamRow(reads, projectId, externalId));
}

/** What a write of records holds of its stream: the stream, its feed position before the write, and its counts. */
export interface ClaimedStream {
  stream: Stream;
  /** The first position the write may give (the positions up to `first + count - 1` are the write's). */
  first: number;
  recordCount: number;
  bytes: number;
}

/**
 * Takes `count` positions of a stream's feed for a write, in the write's transaction. Updating the stream's
 * row locks it until the write commits (on SQLite the write holds the database), so the writes of a stream
 * commit one at a time in the order of their positions: a reader never sees a position before an earlier
 * one is visible, which is what lets a sync cursor step past what it has read.
 */
export async function claimStream(tx: Queryable, projectId: number, externalId: string, count: number): Promise<ClaimedStream> {
  const row = await tx.get<StreamRow & { seq: number }>(
    sql`UPDATE streams SET seq = seq + ${count} WHERE project_id = ${projectId} AND external_id = ${externalId} AND deleted_time IS NULL RETURNING ${COLUMNS}, seq`,
  );
  if (!row) throw noStream(externalId);
  return { stream: streamOf(row), first: Number(row.seq) - count + 1, recordCount: Number(row.record_count), bytes: Number(row.bytes) };
}

/** Counts a write's records and bytes against the stream's limits, and keeps the new counts; a 400 past a limit. */
export async function countAgainstLimits(tx: Queryable, projectId: number, claimed: ClaimedStream, records: number, bytes: number): Promise<void> {
  const { limits } = claimed.stream.settings;
  const total = claimed.recordCount + records;
  if (records > 0 && total > limits.maxRecordsTotal.provisioned) {
    throw new ApiError(
      400,
      `The stream ${JSON.stringify(claimed.stream.externalId)} holds at most ${limits.maxRecordsTotal.provisioned} records (maxRecordsTotal); it holds ${claimed.recordCount}, and this request adds ${records}`,
    );
  }
  const size = claimed.bytes + bytes;
  if (bytes > 0 && size > limits.maxGigaBytesTotal.provisioned * GIGABYTE) {
    throw new ApiError(400, `The stream ${JSON.stringify(claimed.stream.externalId)} holds at most ${limits.maxGigaBytesTotal.provisioned} GB (maxGigaBytesTotal); this request would take it to ${size} bytes`);
  }
  await tx.run(sql`UPDATE streams SET record_count = ${total}, bytes = ${size} WHERE id = ${claimed.stream.id} AND project_id = ${projectId}`);
}

export async function deleteStreams(services: Services, projectId: number, externalIds: readonly string[]) {
  const now = services.now();
  await services.db.transaction(async (tx) => {
    for (const externalId of externalIds) {
      const row = await tx.get<{ id: number }>(
        sql`UPDATE streams SET deleted_time = ${now} WHERE project_id = ${projectId} AND external_id = ${externalId} AND deleted_time IS NULL RETURNING id`,
      );
      if (row) await services.jobs?.start(tx, { projectId, kind: PURGE_JOB, payload: { streamId: Number(row.id) }, key: `purge:${row.id}` });
    }
  });
  return {};
}

/**
 * Deletes, a batch per transaction, the records of a stream that `where` selects, reading each batch in
 * `order` from an index that holds the selected records first, so that a batch's work is bounded by its size
 * and not by what the stream holds; the number deleted.
 */
async function deleteInBatches(store: Queryable, projectId: number, streamId: number, where: Sql, order: Sql, signal: AbortSignal, counted: boolean): Promise<number> {
  let deleted = 0;
  for (;;) {
    if (signal.aborted) return deleted;
    const n = await store.transaction(async (tx) => {
      // The stream's row first, as writes and partition drops lock it (partitions.ts): two runs of a job
      // then take turns, and neither waits on the other in a cycle.
      await tx.run(sql`UPDATE streams SET seq = seq WHERE id = ${streamId} AND project_id = ${projectId}`);
      const batch = await tx.all<{ seq: number; state: number; size: number }>(
        sql`SELECT seq, state, size FROM records WHERE project_id = ${projectId} AND stream_id = ${streamId} AND ${where} ORDER BY ${order} LIMIT ${PURGE_BATCH}`,
      );
      if (batch.length === 0) return 0;
      await tx.run(sql`DELETE FROM records WHERE project_id = ${projectId} AND stream_id = ${streamId} AND seq IN (${batch.map((r) => Number(r.seq))})`);
      if (counted) {
        const live = batch.filter((r) => Number(r.state) !== RECORD_STATE.deleted);
        const bytes = live.reduce((sum, r) => sum + Number(r.size), 0);
        await tx.run(sql`UPDATE streams SET record_count = record_count - ${live.length}, bytes = bytes - ${bytes} WHERE id = ${streamId} AND project_id = ${projectId}`);
      }
      return batch.length;
    });
    deleted += n;
    if (n < PURGE_BATCH) return deleted;
  }
}

/** The handlers of the area's jobs: purging deleted streams, and records past their stream's retention. */
export function registerStreamJobs(runtime: AreaRuntime): void {
  const { jobs, store, now } = runtime;
  jobs.register(PURGE_JOB, async (job, { signal }) => {
    const { streamId } = job.payload as { streamId: number };
    let deleted = 0;
    if (store.dialect.kind === 'postgres') await dropStreamPartition(store, streamId);
    else deleted = await deleteInBatches(store, job.projectId, streamId, sql`1 = 1`, sql`seq`, signal, false);
    if (!signal.aborted) await store.run(sql`DELETE FROM streams WHERE id = ${streamId} AND project_id = ${job.projectId} AND deleted_time IS NOT NULL`);
    return { deleted };
  });
  jobs.register(RETENTION_JOB, async (job, { signal }) => {
    const streams = await store.all<StreamRow>(sql`SELECT ${COLUMNS} FROM streams WHERE project_id = ${job.projectId} AND deleted_time IS NULL`);
    const { tombstoneRetentionMs } = job.payload as { tombstoneRetentionMs: number };
    let deleted = 0;
    for (const row of streams) {
      const stream = streamOf(row);
      const time = now();
      if (stream.retentionMs !== undefined) {
        const cutoff = time - stream.retentionMs;
        deleted += await dropExpiredPartitions(store, job.projectId, stream, cutoff, signal);
        deleted += await deleteInBatches(store, job.projectId, stream.id, sql`last_updated_time < ${cutoff}`, sql`last_updated_time, seq`, signal, true);
      }
      if (stream.type === 'Mutable') {
        const cutoff = time - tombstoneRetentionMs;
        deleted += await deleteInBatches(store, job.projectId, stream.id, sql`state = ${Sql.raw(String(RECORD_STATE.deleted))} AND last_updated_time < ${cutoff}`, sql`last_updated_time`, signal, false);
      }
    }
    return { deleted };
  });
}
