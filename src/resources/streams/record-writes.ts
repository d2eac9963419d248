/**
 * Writing records: ingest (append), upsert (create or replace whole) and delete. A request is checked whole
 * before anything is written: the records' spaces are writable under the caller's `streamRecordsAcl` scope
 * and exist, the containers exist as the caller sees them (`dataModelsAcl`) and are record containers, and
 * every value fits its property. Then one transaction writes it all, or nothing: it takes the stream's next
 * feed positions (streams.ts `claimStream`), writes the rows, and counts them against the stream's limits.
 *
 * An immutable stream takes ingest only, and keeps every record it is given, identifiers repeated or not,
 * but for duplicates (the identifier and the property values of a record it keeps), which it discards. A
 * mutable stream keeps one record per space and external id: ingest refuses one that exists (409), upsert
 * replaces it, and delete leaves a tombstone for the sync feed (unknown records are ignored), which keeps
 * the record's document for sync's filter. A request that
 * names a record of a mutable stream twice is refused (422), as are upsert and delete on an immutable stream.
 */
import { ApiError, badRequest, duplicatedItems } from '../../http/errors.js';
import { stableStringify } from '../../query/cursor.js';
import type { Services } from '../../http/services.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { requireUserSpaces, type Path } from '../models/identifiers.js';
import { existingSpaces } from '../models/schema-store.js';
import { requireSpacesWritable, visibleSchema } from '../models/space-access.js';
import { draftRecord, duplicatedRecords, writtenContainers, type RecordDraft } from './record-documents.js';
import { ensureTimePartition } from './partitions.js';
import type { DeleteRecordsBody, WriteRecordsBody } from './schema.js';
import { retained } from './record-reads.js';
import { RecordSql } from './record-sql.js';
import { claimStream, countAgainstLimits, type ClaimedStream, type Stream } from './streams.js';
import { RECORD_STATE } from './tables.js';

type RecordKey = { space: string; externalId: string };

const keyOf = (r: RecordKey) => `${r.space}\u0000${r.externalId}`;

interface StoredRecord {
  seq: number;
  space: string;
  external_id: string;
  state: number;
  size: number;
}

function checkSpaces(services: Services, items: readonly RecordKey[]): void {
  const at = (i: number): Path => ['items', i, 'space'];
  requireUserSpaces(items.map((r, i) => ({ space: r.space, path: at(i), what: `the record ${r.space}:${r.externalId}` })));
  requireSpacesWritable(services.access, items.map((r, i) => ({ space: r.space, path: at(i) })));
}

function requireMutable(claimed: ClaimedStream, what: string): void {
  if (claimed.stream.type === 'Immutable') {
    throw new ApiError(422, `The stream ${JSON.stringify(claimed.stream.externalId)} is immutable: its records cannot be ${what}; only mutable streams take this request`);
  }
}

/** Each record named once; a 422 listing those named more often. */
function requireDistinct(items: readonly RecordKey[]): void {
  const seen = new Set<string>();
  const twice = new Map<string, RecordKey>();
  for (const r of items) {
    const k = keyOf(r);
    if (seen.has(k)) twice.set(k, r);
    seen.add(k);
  }
  if (twice.size > 0) throw duplicatedRecords([...twice.values()]);
}

/**
 * The rows of a stream with these identifiers, among those `where` selects, each looked up in `index` (an
 * index of identifiers whose condition `where` repeats). Both stores would otherwise plan a list of pairs
 * (`IN (VALUES ...)`) as a scan of the stream whenever they plan it over few rows: PostgreSQL over a new
 * partition, which has no statistics yet (a lateral join makes it look up each pair), SQLite when it first
 * prepares the statement, whose plan it then keeps for every request of the same shape (`INDEXED BY`).
 */
async function byKeys<T>(tx: Queryable, projectId: number, streamId: number, columns: Sql, index: string, where: Sql[], keys: readonly RecordKey[]): Promise<T[]> {
  const own = [sql`project_id = ${projectId}`, sql`stream_id = ${streamId}`, ...where];
  const distinct = [...new Map(keys.map((k) => [keyOf(k), k])).values()];
  const pairs = Sql.join(
    distinct.map((k) => sql`(${k.space}, ${k.externalId})`),
    ', ',
  );
  if (tx.dialect.kind === 'postgres') {
    return tx.all<T>(
      sql`SELECT r.* FROM (VALUES ${pairs}) AS k (space, external_id) CROSS JOIN LATERAL (SELECT ${columns} FROM records WHERE ${Sql.and([...own, sql`space = k.space`, sql`external_id = k.external_id`])}) r`,
    );
  }
  return tx.all<T>(sql`SELECT ${columns} FROM records INDEXED BY ${Sql.raw(index)} WHERE ${Sql.and([...own, sql`(space, external_id) IN (VALUES ${pairs})`])}`);
}

/** The records of a mutable stream with these identifiers, tombstones included, by key. */
async function storedRecords(tx: Queryable, projectId: number, streamId: number, keys: readonly RecordKey[]): Promise<Map<string, StoredRecord>> {
  const rows = await byKeys<StoredRecord>(tx, projectId, streamId, sql`seq, space, external_id, state, size`, 'records_key', [sql`keyed = 1`], keys);
  return new Map(rows.map((r) => [keyOf({ space: r.space, externalId: r.external_id }), r]));
}

/** A record's identity as an immutable stream's duplicates share it: its identifier and its property values. */
const contentOf = (space: string, externalId: string, doc: string) => `${keyOf({ space, externalId })}\u0000${stableStringify(JSON.parse(doc))}`;

/**
 * The records of an ingest into an immutable stream without the duplicates, which are discarded: records
 * with the identifier and the property values of one the stream keeps, or of one before them in the request.
 */
async function withoutDuplicates(tx: Queryable, projectId: number, stream: Stream, drafts: readonly RecordDraft[], now: number): Promise<RecordDraft[]> {
  const q = new RecordSql(tx.dialect, undefined, 'records');
  const columns = sql`space, external_id, ${tx.dialect.documentText(q.field('doc'))} AS doc`;
  const kept = await byKeys<{ space: string; external_id: string; doc: string }>(tx, projectId, stream.id, columns, 'records_ids', [sql`keyed = 0`, ...retained(stream, now, q)], drafts);
  const seen = new Set(kept.map((r) => contentOf(r.space, r.external_id, r.doc)));
  return drafts.filter((d) => {
    const content = contentOf(d.space, d.externalId, d.doc);
    if (seen.has(content)) return false;
    seen.add(content);
    return true;
  });
}

async function insertRecords(tx: Queryable, projectId: number, claimed: ClaimedStream, rows: ReadonlyArray<{ draft: RecordDraft; seq: number }>, keyed: boolean, now: number): Promise<void> {
  if (rows.length === 0) return;
  const d = tx.dialect;
  const values = rows.map(
    ({ draft, seq }) =>
      sql`(${projectId}, ${claimed.stream.id}, ${seq}, ${draft.space}, ${draft.externalId}, ${now}, ${now}, ${RECORD_STATE.created}, ${keyed ? 1 : 0}, ${d.document(sql`${draft.doc}`)}, ${draft.size})`,
  );
  await tx.run(
    sql`INSERT INTO records (project_id, stream_id, seq, space, external_id, created_time, last_updated_time, state, keyed, doc, size) VALUES ${Sql.join(values, ', ')}`,
  );
}

export async function writeRecords(services: Services, projectId: number, streamExternalId: string, body: WriteRecordsBody, mode: 'ingest' | 'upsert') {
  checkSpaces(services, body.items);
  const schema = (await visibleSchema(services, projectId)).resolver;
  writtenContainers(body.items, schema);
  const drafts = body.items.map((item, i) => draftRecord(item, schema, ['items', i]));
  await services.db.transaction(async (tx) => {
    const claimed = await claimStream(tx, projectId, streamExternalId, drafts.length);
    // Read under the stream's lock, so that a stream's records are stamped in the order of their positions
    // (which is what lets sync start from a time).
    const now = services.now();
    if (mode === 'upsert') requireMutable(claimed, 'replaced');
    const found = await existingSpaces(tx, projectId, drafts.map((d) => d.space));
    const unknown = [...new Set(drafts.map((d) => d.space))].filter((s) => !found.has(s));
    if (unknown.length > 0) throw badRequest(`One or more spaces do not exist: ${unknown.join(', ')}`, { missing: unknown.map((space) => ({ space })) });
    const positioned = drafts.map((draft, i) => ({ draft, seq: claimed.first + i }));
    const bytes = drafts.reduce((sum, d) => sum + d.size, 0);

    if (claimed.stream.type === 'Immutable') {
      const fresh = await withoutDuplicates(tx, projectId, claimed.stream, drafts, now);
      await ensureTimePartition(tx, claimed.stream, now);
      await insertRecords(tx, projectId, claimed, fresh.map((draft, i) => ({ draft, seq: claimed.first + i })), false, now);
      await countAgainstLimits(tx, projectId, claimed, fresh.length, fresh.reduce((sum, d) => sum + d.size, 0));
      return;
    }
    requireDistinct(drafts);
    const stored = await storedRecords(tx, projectId, claimed.stream.id, drafts);
    const live = (d: RecordDraft) => {
      const s = stored.get(keyOf(d));
      return s && Number(s.state) !== RECORD_STATE.deleted ? s : undefined;
    };
    if (mode === 'ingest') {
      const existing = drafts.filter((d) => live(d));
      if (existing.length > 0) {
        throw duplicatedItems(
          existing.map((d) => ({ space: d.space, externalId: d.externalId })),
          409,
        );
      }
    }
    let replacedBytes = 0;
    let replaced = 0;
    const fresh: typeof positioned = [];
    for (const p of positioned) {
      const s = stored.get(keyOf(p.draft));
      if (!s) {
        fresh.push(p);
        continue;
      }
      const wasLive = Number(s.state) !== RECORD_STATE.deleted;
      if (wasLive) {
        replaced++;
        replacedBytes += Number(s.size);
      }
      // A tombstone's identifier is created anew; a live record keeps its creation time.
      await tx.run(sql`UPDATE records SET seq = ${p.seq}, state = ${wasLive ? RECORD_STATE.updated : RECORD_STATE.created},
        created_time = ${wasLive ? Sql.raw('created_time') : now}, last_updated_time = ${now}, doc = ${tx.dialect.document(sql`${p.draft.doc}`)}, size = ${p.draft.size}
        WHERE project_id = ${projectId} AND stream_id = ${claimed.stream.id} AND seq = ${s.seq}`);
    }
    await insertRecords(tx, projectId, claimed, fresh, true, now);
    await countAgainstLimits(tx, projectId, claimed, drafts.length - replaced, bytes - replacedBytes);
  });
  return {};
}

export async function deleteRecords(services: Services, projectId: number, streamExternalId: string, body: DeleteRecordsBody) {
  checkSpaces(services, body.items);
  requireDistinct(body.items);
  await services.db.transaction(async (tx) => {
    const claimed = await claimStream(tx, projectId, streamExternalId, body.items.length);
    const now = services.now();
    requireMutable(claimed, 'deleted');
    const stored = await storedRecords(tx, projectId, claimed.stream.id, body.items);
    let deleted = 0;
    let bytes = 0;
    for (const [i, item] of body.items.entries()) {
      const s = stored.get(keyOf(item));
      if (!s || Number(s.state) === RECORD_STATE.deleted) continue;
      deleted++;
      bytes += Number(s.size);
      await tx.run(sql`UPDATE records SET seq = ${claimed.first + i}, state = ${RECORD_STATE.deleted}, last_updated_time = ${now}, size = 0
        WHERE project_id = ${projectId} AND stream_id = ${claimed.stream.id} AND seq = ${s.seq}`);
    }
    await countAgainstLimits(tx, projectId, claimed, -deleted, -bytes);
  });
  return {};
}
