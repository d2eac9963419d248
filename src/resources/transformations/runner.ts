/**
 * The job that runs a transformation: it reads what the query names with the source credentials, runs the
 * query in the engine, and writes the rows with the destination credentials (the session given to `run`
 * stands for both when there was one). What it read and wrote are its metrics, kept as its progress while it
 * runs and as its result once it has finished. A run is tried once: a second attempt could write twice. A
 * schedule's firing starts the job alone; the job then records the run itself.
 */
import type { AreaRuntime } from '../../http/area.js';
import type { Credential } from '../../http/self-calls.js';
import { JobFailure, type Job, type JobContext } from '../../storage/jobs/jobs.js';
import { rowsByIds, toValues } from '../../storage/items.js';
import { sql } from '../../storage/sql.js';
import { parseQuery, runQuery } from './engine.js';
import { transformationModel, type ConflictMode, type Destination } from './model.js';
import { recordRun, RUN_KIND, RUN_LIMITS, sourceLoader } from './service.js';
import { writeRows } from './writer.js';

interface RunRow {
  project: string;
  query: string;
  destination: string;
  conflictMode: ConflictMode;
  ignoreNullFields: number | boolean;
  runGrant: string | null;
  sourceGrant: string | null;
  destinationGrant: string | null;
}

const SELECT_RUN = (projectId: number, runner: number) => sql`SELECT j.source_project AS project, j.query, j.destination, j.conflict_mode AS "conflictMode",
    j.ignore_null_fields AS "ignoreNullFields", j.run_grant AS "runGrant", t.source_grant AS "sourceGrant", t.destination_grant AS "destinationGrant"
  FROM transformation_jobs j LEFT JOIN transformations t ON t.project_id = j.project_id AND t.id = j.transformation_id
  WHERE j.project_id = ${projectId} AND j.runner = ${runner}`;

/** The run's record: the one `run` made, or, for a job its schedule started, one made now from the transformation. */
async function runRecord(runtime: AreaRuntime, job: Job): Promise<RunRow> {
  const found = await runtime.store.get<RunRow>(SELECT_RUN(job.projectId, job.id));
  if (found) return found;
  const scheduled = job.payload as { transformationId?: number; project?: string } | null;
  if (!scheduled?.transformationId || !scheduled.project) throw new JobFailure('The job record is gone');
  const { transformationId, project } = scheduled;
  return runtime.store.transaction(async (tx) => {
    const t = transformationModel.table;
    const row = (await rowsByIds(tx, t, job.projectId, [transformationId])).get(transformationId);
    if (!row) throw new JobFailure(`The transformation ${transformationId} no longer exists`);
    await recordRun(tx, { id: job.projectId, name: project }, { ...toValues(t, row), id: transformationId }, job.id, undefined, runtime.now());
    return (await tx.get<RunRow>(SELECT_RUN(job.projectId, job.id)))!;
  });
}

async function run(runtime: AreaRuntime, job: Job, context: JobContext): Promise<Record<string, number>> {
  const row = await runRecord(runtime, job);
  const source = (row.runGrant ?? row.sourceGrant) as string | null;
  const destination = (row.runGrant ?? row.destinationGrant) as string | null;
  if (!source || !destination) throw new JobFailure('The transformation has no credentials to run with (it was deleted, or its sessions were cleared)');
  const sourceCredential = JSON.parse(source) as Credential;
  const metrics: Record<string, number> = {};
  try {
    const parsed = await parseQuery(row.query, 'The query');
    const load = sourceLoader(runtime.api, row.project, sourceCredential, RUN_LIMITS.sourceRows, context.signal);
    const result = await runQuery(parsed, { load, limit: RUN_LIMITS.resultRows, signal: context.signal, timeoutMs: RUN_LIMITS.timeoutMs });
    if (result.rows.length > RUN_LIMITS.resultRows) throw new JobFailure(`The query gives more than ${RUN_LIMITS.resultRows} rows, more than a run writes`);
    for (const [table, count] of Object.entries(result.read)) metrics[`${table}.read`] = count;
    await context.progress(metrics);
    const written = await writeRows(
      {
        api: runtime.api,
        project: row.project,
        credential: JSON.parse(destination) as Credential,
        destination: JSON.parse(row.destination) as Destination,
        conflictMode: row.conflictMode,
        ignoreNullFields: !!row.ignoreNullFields,
        signal: context.signal,
      },
      result.rows,
    );
    return { ...metrics, ...written };
  } catch (error) {
    if (context.signal.aborted || error instanceof JobFailure) throw error;
    throw new JobFailure(error instanceof Error ? error.message : String(error));
  }
}

export function registerTransformationJobs(runtime: AreaRuntime): void {
  // Kept: a transformation job's record answers its run's state from the durable job.
  runtime.jobs.register(RUN_KIND, (job, context) => run(runtime, job, context), { maxAttempts: 1, concurrency: 1, leaseMs: 5 * 60_000, keepEndedMs: Infinity });
}
