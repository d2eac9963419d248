/**
 * The data modeling side of 3D: jobs over 3D source data (`/3d/jobs`), their results, and the result keys a
 * user rejects. A job is named by its space and external id (kept by 3D, not written to data modeling) and
 * reaches only what the instance scope of the request reaches. The one job type the reference names,
 * `ImageTextDetection` (text recognition in the 360 images of a collection), needs a recognizer Strata does
 * not have: a job's nonce is bound to check it (a session the caller may hand over), and the job is recorded
 * as `Failed`, with no results. Rejections are kept per job and result, as clients list them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { badRequest, formatPath, missingItems } from '../../http/errors.js';
import { Cursor } from '../../http/common-schemas.js';
import type { Services } from '../../http/services.js';
import { insertRows } from '../../storage/items.js';
import type { TableDef } from '../../storage/schema.js';
import { sql } from '../../storage/sql.js';
import { requireSpacesWritable, spaceCondition } from '../models/space-access.js';
import { SpaceId } from '../models/identifiers.js';

const JobExternalId = Type.String({ minLength: 1, maxLength: 256, pattern: '^[^\\x00]{1,256}$' });
const JobRef = Type.Object({ space: SpaceId, externalId: JobExternalId }, { additionalProperties: false });
type JobRef = Static<typeof JobRef>;
const InstanceRef = Type.Object({ space: Type.String({ minLength: 1, maxLength: 43 }), externalId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });

export const CreateJobsBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          space: SpaceId,
          externalId: JobExternalId,
          name: Type.String({ maxLength: 255 }),
          type: Type.Literal('ImageTextDetection'),
          source: Type.Object({ type: Type.Literal('Cognite360ImageCollection'), instanceId: InstanceRef }, { additionalProperties: false }),
          configuration: Type.Object({}, { additionalProperties: false }),
          nonce: Type.String({ minLength: 1, maxLength: 4096 }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1 },
    ),
  },
  { additionalProperties: false },
);
export const ListJobsBody = Type.Object({ cursor: Type.Optional(Cursor), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }, { additionalProperties: false });
export const DeleteJobsBody = Type.Object({ items: Type.Array(JobRef, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false });
export const ListResultsBody = Type.Object({ job: JobRef, cursor: Type.Optional(Cursor) }, { additionalProperties: false });
const ResultRef = Type.Object({ instanceId: InstanceRef }, { additionalProperties: false });
const Keys = Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), { maxItems: 1000 });
export const RejectionsBody = Type.Union([
  Type.Object({ job: JobRef, result: ResultRef, add: Keys }, { additionalProperties: false }),
  Type.Object({ job: JobRef, result: ResultRef, remove: Keys }, { additionalProperties: false }),
]);
export const ListRejectionsBody = Type.Object({ job: JobRef, result: ResultRef, cursor: Type.Optional(Cursor) }, { additionalProperties: false });

export const jobTables: readonly TableDef[] = [
  {
    name: 'threed_dm_jobs',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      space: { type: 'text', notNull: true },
      external_id: { type: 'text', notNull: true },
      name: { type: 'text', notNull: true },
      type: { type: 'text', notNull: true },
      source: { type: 'text', notNull: true },
      status: { type: 'text', notNull: true },
      created_at: { type: 'integer', notNull: true },
    },
    primaryKey: ['project_id', 'space', 'external_id'],
  },
  {
    name: 'threed_job_rejections',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      job_space: { type: 'text', notNull: true },
      job_external_id: { type: 'text', notNull: true },
      result_space: { type: 'text', notNull: true },
      result_external_id: { type: 'text', notNull: true },
      rejected_key: { type: 'text', notNull: true },
    },
    primaryKey: ['project_id', 'job_space', 'job_external_id', 'result_space', 'result_external_id', 'rejected_key'],
  },
];

const PAGE = 100;

/** The sort values a cursor of `pageOf` holds for the list `query` names (the API's cursors: sealed, bound to the query). */
export function readCursor(services: Services, cursor: string | undefined, query: unknown): Array<string | number> | undefined {
  return cursor === undefined ? undefined : (services.cursors.decode(cursor, query) as Array<string | number>);
}

/** A page of `rows` read one past `limit`: the page, and the cursor after its last row when there is more. */
export function pageOf<R>(services: Services, rows: readonly R[], limit: number, query: unknown, key: (row: R) => Array<string | number>): { page: R[]; nextCursor?: string } {
  const page = rows.slice(0, limit);
  return rows.length > limit ? { page, nextCursor: services.cursors.encode(key(page[page.length - 1]), query) } : { page };
}

interface JobRow {
  space: string;
  external_id: string;
  name: string;
  type: string;
  source: string;
  status: string;
  created_at: number;
}

const answer = (r: JobRow) => ({
  space: r.space,
  externalId: r.external_id,
  name: r.name,
  type: r.type,
  source: JSON.parse(r.source) as unknown,
  configuration: {},
  status: r.status,
  createdAt: Number(r.created_at),
});

const scoped = (services: Services) => spaceCondition(services.access, 'space');

async function requireJob(services: Services, projectId: number, job: JobRef, path: Array<string | number>) {
  const scope = scoped(services);
  const row = await services.db.get(
    sql`SELECT 1 AS found FROM threed_dm_jobs WHERE project_id = ${projectId} AND space = ${job.space} AND external_id = ${job.externalId} ${scope ? sql`AND ${scope}` : sql``}`,
  );
  if (!row) throw badRequest(`${formatPath(path)}: the job ${JSON.stringify(job)} does not exist`);
}

export async function createJobs(services: Services, projectName: string, projectId: number, body: Static<typeof CreateJobsBody>) {
  requireSpacesWritable(services.access, body.items.map((item, i) => ({ space: item.space, path: ['items', i, 'space'] })));
  const existing = [];
  for (const item of body.items) {
    const row = await services.db.get(sql`SELECT 1 AS found FROM threed_dm_jobs WHERE project_id = ${projectId} AND space = ${item.space} AND external_id = ${item.externalId}`);
    if (row) existing.push({ space: item.space, externalId: item.externalId });
  }
  if (existing.length) throw badRequest(`The jobs ${existing.map((e) => JSON.stringify(e)).join(', ')} exist already`);
  // The nonce is used up as the reference uses it: a session the job would run with.
  for (const item of body.items) await services.api!.bind(projectName, item.nonce);
  const now = services.now();
  const rows: JobRow[] = body.items.map((item) => ({
    space: item.space,
    external_id: item.externalId,
    name: item.name,
    type: item.type,
    source: JSON.stringify(item.source),
    status: 'Failed',
    created_at: now,
  }));
  await services.db.transaction((tx) =>
    insertRows(tx, 'threed_dm_jobs', ['project_id', 'space', 'external_id', 'name', 'type', 'source', 'status', 'created_at'], rows.map((r) => [projectId, r.space, r.external_id, r.name, r.type, r.source, r.status, r.created_at])),
  );
  return { items: rows.map(answer) };
}

export async function listJobs(services: Services, projectId: number, body: Static<typeof ListJobsBody>) {
  const limit = body.limit ?? PAGE;
  const query = { list: '3d-jobs' };
  const after = readCursor(services, body.cursor, query);
  const scope = scoped(services);
  const rows = await services.db.all<JobRow>(
    sql`SELECT space, external_id, name, type, source, status, created_at FROM threed_dm_jobs WHERE project_id = ${projectId}
        ${after ? sql`AND (space > ${after[0]} OR (space = ${after[0]} AND external_id > ${after[1]}))` : sql``} ${scope ? sql`AND ${scope}` : sql``}
        ORDER BY space, external_id LIMIT ${limit + 1}`,
  );
  const { page, nextCursor } = pageOf(services, rows, limit, query, (r) => [r.space, r.external_id]);
  return { items: page.map(answer), ...(nextCursor ? { nextCursor } : {}) };
}

/** Deletes jobs, with the rejections kept for them; an unknown job is `missing`, and nothing is deleted. */
export async function deleteJobs(services: Services, projectId: number, items: readonly JobRef[]) {
  requireSpacesWritable(services.access, items.map((item, i) => ({ space: item.space, path: ['items', i, 'space'] })));
  await services.db.transaction(async (tx) => {
    const missing = [];
    for (const job of items) {
      const row = await tx.get(sql`SELECT 1 AS found FROM threed_dm_jobs WHERE project_id = ${projectId} AND space = ${job.space} AND external_id = ${job.externalId}`);
      if (!row) missing.push({ space: job.space, externalId: job.externalId });
    }
    if (missing.length) throw missingItems(missing);
    for (const job of items) {
      await tx.run(sql`DELETE FROM threed_job_rejections WHERE project_id = ${projectId} AND job_space = ${job.space} AND job_external_id = ${job.externalId}`);
      await tx.run(sql`DELETE FROM threed_dm_jobs WHERE project_id = ${projectId} AND space = ${job.space} AND external_id = ${job.externalId}`);
    }
  });
  return {};
}

export async function listResults(services: Services, projectId: number, body: Static<typeof ListResultsBody>) {
  await requireJob(services, projectId, body.job, ['job']);
  readCursor(services, body.cursor, { list: '3d-job-results', job: body.job });
  return { items: [] };
}

const resultWhere = (projectId: number, job: JobRef, result: Static<typeof ResultRef>) =>
  sql`project_id = ${projectId} AND job_space = ${job.space} AND job_external_id = ${job.externalId} AND result_space = ${result.instanceId.space} AND result_external_id = ${result.instanceId.externalId}`;

export async function updateRejections(services: Services, projectId: number, body: Static<typeof RejectionsBody>) {
  await requireJob(services, projectId, body.job, ['job']);
  const where = resultWhere(projectId, body.job, body.result);
  await services.db.transaction(async (tx) => {
    if ('add' in body) {
      const keys = [...new Set(body.add)];
      const held = new Set((await tx.all<{ k: string }>(sql`SELECT rejected_key AS k FROM threed_job_rejections WHERE ${where}`)).map((r) => r.k));
      const rows = keys.filter((k) => !held.has(k)).map((k) => [projectId, body.job.space, body.job.externalId, body.result.instanceId.space, body.result.instanceId.externalId, k]);
      await insertRows(tx, 'threed_job_rejections', ['project_id', 'job_space', 'job_external_id', 'result_space', 'result_external_id', 'rejected_key'], rows);
    } else if (body.remove.length) {
      await tx.run(sql`DELETE FROM threed_job_rejections WHERE ${where} AND rejected_key IN (${body.remove})`);
    }
  });
  return {};
}

export async function listRejections(services: Services, projectId: number, body: Static<typeof ListRejectionsBody>) {
  await requireJob(services, projectId, body.job, ['job']);
  const query = { list: '3d-job-rejections', job: body.job, result: body.result };
  const after = readCursor(services, body.cursor, query);
  const rows = await services.db.all<{ k: string }>(
    sql`SELECT rejected_key AS k FROM threed_job_rejections WHERE ${resultWhere(projectId, body.job, body.result)} ${after ? sql`AND rejected_key > ${after[0]}` : sql``} ORDER BY rejected_key LIMIT ${PAGE + 1}`,
  );
  const { page, nextCursor } = pageOf(services, rows, PAGE, query, (r) => [r.k]);
  return { items: page.map((r) => ({ rejectedKey: r.k })), ...(nextCursor ? { nextCursor } : {}) };
}
