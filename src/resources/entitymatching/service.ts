/**
 * Entity matching: models fitted, refitted and used for predictions as durable jobs. A request checks what
 * it can (the fields to match present, confirmed matches naming entities that exist), stores the training
 * data as a blob and the model as `Queued`, and starts the fit; the fit marks the model `Running`, then
 * `Completed` with what it learned, or `Failed` with the reason. A prediction is a job of its own whose
 * result is the matches; its status and result are read by its job id.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { AreaRuntime } from '../../http/area.js';
import { badRequest, formatPath, missingItems } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { and, equalsLeaf } from '../../query/basic.js';
import type { FilterNode } from '../../query/filter.js';
import type { BlobStore } from '../../storage/blobs/blob-store.js';
import type { Item } from '../../storage/items.js';
import { JobFailure, type Job, type JobContext, type Jobs } from '../../storage/jobs/jobs.js';
import { sql } from '../../storage/sql.js';
import { createItems, fromModel, getItem, inWrite, retrieveItems, type Path, type ResourceSpec } from '../crud.js';
import type { RefInput } from '../../query/refs.js';
import { CLASSIFIERS, FEATURE_TYPES, fit, Population, predict, type Classifier, type Entity, type FeatureType, type Fitted, type MatchField } from './matcher.js';
import { entityMatchingModel } from './model.js';
import type { CreateModelBody, ModelFilter, PredictBody, RefitBody, TrueMatch } from './schema.js';

const FIT_JOB = 'entitymatching.fit';
const PREDICT_JOB = 'entitymatching.predict';
const DEFAULT_MATCH_FIELDS: MatchField[] = [{ source: 'name', target: 'name' }];
const DEFAULT_NUM_MATCHES = 1;

interface TrainingData {
  sources: Entity[];
  targets: Entity[];
  trueMatches: TrueMatch[];
}

/** What a fit reads of a model, as stored. */
interface ModelSettings {
  featureType: FeatureType;
  matchFields: MatchField[];
  classifier: Classifier;
  ignoreMissingFields: boolean;
}

type ModelValues = ModelSettings & { externalId?: string; name?: string; description?: string; originalId?: number; dataKey: string };

export const modelSpec: ResourceSpec<ModelValues> = {
  ...fromModel(entityMatchingModel),
  createValues: (item, now) => ({ ...item, status: 'Queued', startTime: now, statusTime: now }),
  async beforeDelete(ids, { db, projectId, services }) {
    const rows = await db.all<{ key: string }>(sql`SELECT data_key AS "key" FROM entity_matching_models WHERE project_id = ${projectId} AND id IN (${ids})`);
    const blobs = services.blobs!;
    db.afterCommit(() => Promise.all(rows.map((r) => blobs.delete(projectId, r.key))));
  },
};
const spec = modelSpec as ResourceSpec<unknown>;

function needJobs(services: Pick<Services, 'jobs' | 'blobs'>): { jobs: Jobs; blobs: BlobStore } {
  return { jobs: services.jobs!, blobs: services.blobs! };
}

/** Refuses entities that lack a field of `matchFields` (or hold something other than a string in it), unless missing fields are allowed. */
function checkFields(entities: readonly Entity[], side: 'sources' | 'targets', fields: readonly MatchField[], ignoreMissing: boolean): void {
  if (ignoreMissing) return;
  const names = [...new Set(fields.map((f) => (side === 'sources' ? f.source : f.target)))];
  entities.forEach((entity, i) => {
    const name = names.find((n) => typeof entity[n] !== 'string');
    if (name !== undefined) {
      throw badRequest(
        `${formatPath([side, i, name])}: missing or not a string; every entity of ${side} needs a string in each field that matchFields names ` +
          '(only string values are matched), or set ignoreMissingFields to true to read a missing field as empty',
      );
    }
  });
}

/** Where each entity's id and external id is (the first entity with it). */
function positions(entities: readonly Entity[]): { byId: Map<unknown, number>; byExternalId: Map<unknown, number> } {
  const byId = new Map<unknown, number>();
  const byExternalId = new Map<unknown, number>();
  entities.forEach((e, i) => {
    if (e.id !== undefined && !byId.has(e.id)) byId.set(e.id, i);
    if (e.externalId !== undefined && !byExternalId.has(e.externalId)) byExternalId.set(e.externalId, i);
  });
  return { byId, byExternalId };
}

/** The positions of a match's source and target in the data (undefined where the data has no such entity). */
function pairFinder(data: Pick<TrainingData, 'sources' | 'targets'>): (m: TrueMatch) => [number | undefined, number | undefined] {
  const s = positions(data.sources);
  const t = positions(data.targets);
  return (m) => [
    m.sourceId !== undefined ? s.byId.get(m.sourceId) : s.byExternalId.get(m.sourceExternalId),
    m.targetId !== undefined ? t.byId.get(m.targetId) : t.byExternalId.get(m.targetExternalId),
  ];
}

/**
 * The confirmed matches as (source, target) positions. A match naming an entity absent from the data is
 * refused with its place when `path` is given, and left out otherwise (a refit's earlier matches, when
 * the refit brings other entities).
 */
function pairsOf(data: Pick<TrainingData, 'sources' | 'targets'>, matches: readonly TrueMatch[], path?: Path): Array<[number, number]> {
  const find = pairFinder(data);
  const pairs: Array<[number, number]> = [];
  matches.forEach((m, i) => {
    const [si, ti] = find(m);
    if (si !== undefined && ti !== undefined) {
      pairs.push([si, ti]);
      return;
    }
    if (!path) return;
    const [field, side, value] =
      si === undefined
        ? m.sourceId !== undefined
          ? ['sourceId', 'source', m.sourceId]
          : ['sourceExternalId', 'source', m.sourceExternalId]
        : m.targetId !== undefined
          ? ['targetId', 'target', m.targetId]
          : ['targetExternalId', 'target', m.targetExternalId];
    const key = field.endsWith('ExternalId') ? 'externalId' : 'id';
    throw badRequest(`${formatPath([...path, i, field])}: no ${side} has ${key} ${JSON.stringify(value)}; a confirmed match names entities of the ${side}s given`);
  });
  return pairs;
}

async function putJson(blobs: BlobStore, projectId: number, key: string, value: unknown): Promise<void> {
  await blobs.put(projectId, key, Readable.from([Buffer.from(JSON.stringify(value))]));
}

async function readJson<T>(blobs: BlobStore, projectId: number, key: string): Promise<T> {
  const stream = await blobs.get(projectId, key);
  if (!stream) throw new JobFailure('The training data of the model is gone');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

/** Stores the training data, then the model as `Queued` with its fit started, in one write. */
async function startModel(services: Services, projectId: number, values: Omit<ModelValues, 'dataKey'>, data: TrainingData): Promise<Item> {
  const { jobs, blobs } = needJobs(services);
  const dataKey = `entitymatching/${randomUUID()}`;
  await putJson(blobs, projectId, dataKey, data);
  try {
    return await inWrite(services, async (services) => {
      const [model] = await createItems(modelSpec, services, projectId, [{ ...values, dataKey }]);
      await jobs.start(services.db, { projectId, kind: FIT_JOB, payload: { modelId: model.id } });
      return model;
    });
  } catch (error) {
    await blobs.delete(projectId, dataKey);
    throw error;
  }
}

/** The body without its null fields: the Python SDK sends null for what it was not given. */
export function withoutNulls<T extends object>(body: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null)) as { [K in keyof T]: Exclude<T[K], null> };
}

/** One of the allowed values, in any case (the Python SDK's users write `LogisticRegression`), or a 400 naming them. */
function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, name: string): T {
  if (value === undefined) return fallback;
  const found = allowed.find((a) => a === value.toLowerCase());
  if (!found) throw badRequest(`${name}: ${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
  return found;
}

export function createModel(services: Services, projectId: number, given: CreateModelBody): Promise<Item> {
  const body = withoutNulls(given);
  const matchFields = body.matchFields ?? DEFAULT_MATCH_FIELDS;
  const ignoreMissingFields = body.ignoreMissingFields ?? false;
  checkFields(body.sources, 'sources', matchFields, ignoreMissingFields);
  checkFields(body.targets, 'targets', matchFields, ignoreMissingFields);
  const trueMatches = (body.trueMatches ?? []) as TrueMatch[];
  pairsOf(body, trueMatches, ['trueMatches']);
  const { sources, targets, trueMatches: _, ...rest } = body;
  const values = {
    ...rest,
    featureType: oneOf(body.featureType, FEATURE_TYPES, 'simple', 'featureType'),
    classifier: oneOf(body.classifier, CLASSIFIERS, 'randomforest', 'classifier'),
    matchFields,
    ignoreMissingFields,
  };
  return startModel(services, projectId, values, { sources, targets, trueMatches });
}

/**
 * Models by id or external id, in the order asked; a model asked for twice is answered twice, as the Python
 * SDK's tests ask (`retrieve_multiple(ids=[id, id])`).
 */
export async function retrieveModels(services: Services, projectId: number, refs: ReadonlyArray<{ id?: number; externalId?: string }>, ignoreUnknownIds = false) {
  const key = (r: { id?: number; externalId?: string }) => (r.id !== undefined ? `id:${r.id}` : `x:${r.externalId}`);
  const unique = [...new Map(refs.map((r) => [key(r), r])).values()];
  const found = await retrieveItems(spec, services, projectId, unique as RefInput[], ignoreUnknownIds);
  const byKey = new Map<string, Item>();
  for (const m of found) {
    byKey.set(`id:${m.id}`, m);
    if (m.externalId !== undefined) byKey.set(`x:${m.externalId}`, m);
  }
  return { items: refs.flatMap((r) => byKey.get(key(r)) ?? []) };
}

function modelRef(body: { id?: number; externalId?: string }): { id: number } | { externalId: string } {
  if (body.id !== undefined && body.externalId !== undefined) throw badRequest('Give the model by id or by externalId, not both');
  if (body.id !== undefined) return { id: body.id };
  if (body.externalId !== undefined) return { externalId: body.externalId };
  throw badRequest('Give the model by id or by externalId');
}

async function storedKey(services: Services, projectId: number, id: number): Promise<string> {
  const row = await services.db.get<{ key: string }>(sql`SELECT data_key AS "key" FROM entity_matching_models WHERE project_id = ${projectId} AND id = ${id}`);
  return row!.key;
}

export async function refitModel(services: Services, projectId: number, given: RefitBody): Promise<Item> {
  const body = withoutNulls(given);
  const original = await getItem(spec, services, projectId, modelRef(body));
  const settings = original as unknown as ModelSettings & { id: number; name?: string; description?: string };
  const stored = await readJson<TrainingData>(services.blobs!, projectId, await storedKey(services, projectId, original.id));
  for (const side of ['sources', 'targets'] as const) if (body[side]) checkFields(body[side], side, settings.matchFields, settings.ignoreMissingFields);
  const data = { sources: body.sources ?? stored.sources, targets: body.targets ?? stored.targets };
  const added = body.trueMatches as TrueMatch[];
  pairsOf(data, added, ['trueMatches']);
  const find = pairFinder(data);
  const earlier = stored.trueMatches.filter((m) => find(m).every((at) => at !== undefined));
  const values = {
    featureType: settings.featureType,
    matchFields: settings.matchFields,
    classifier: settings.classifier,
    ignoreMissingFields: settings.ignoreMissingFields,
    originalId: original.id,
    ...(settings.name !== undefined ? { name: settings.name } : {}),
    ...(settings.description !== undefined ? { description: settings.description } : {}),
    ...(body.newExternalId !== undefined ? { externalId: body.newExternalId } : {}),
  };
  return startModel(services, projectId, values, { ...data, trueMatches: [...earlier, ...added] });
}

/** How the reference names a job's state. */
function statusOf(job: Job): string {
  if (job.state === 'queued') return 'Queued';
  if (job.state === 'running') return 'Running';
  return job.state === 'succeeded' ? 'Completed' : 'Failed';
}

function jobView(job: Job): Record<string, unknown> {
  return {
    jobId: job.id,
    status: statusOf(job),
    createdTime: job.createdTime,
    startTime: job.startedTime ?? job.createdTime,
    statusTime: job.lastUpdatedTime,
    ...(job.error !== undefined && statusOf(job) === 'Failed' ? { errorMessage: job.error } : {}),
  };
}

export async function startPrediction(services: Services, projectId: number, given: PredictBody): Promise<Record<string, unknown>> {
  const body = withoutNulls(given);
  const { jobs } = needJobs(services);
  const model = (await getItem(spec, services, projectId, modelRef(body))) as Item & ModelSettings & { status: string };
  if (model.status !== 'Completed') {
    throw badRequest(`Entity matching model ${model.id} is ${model.status}: a prediction needs a model whose fit has Completed`);
  }
  for (const side of ['sources', 'targets'] as const) if (body[side]) checkFields(body[side], side, model.matchFields, model.ignoreMissingFields);
  const payload = {
    modelId: model.id,
    ...(body.sources ? { sources: body.sources } : {}),
    ...(body.targets ? { targets: body.targets } : {}),
    numMatches: body.numMatches ?? DEFAULT_NUM_MATCHES,
    scoreThreshold: body.scoreThreshold ?? 0,
  };
  const job = await inWrite(services, async (s) => jobs.get(s.db, projectId, await jobs.start(s.db, { projectId, kind: PREDICT_JOB, payload })));
  return jobView(job!);
}

/** What a job token is bound to: one prediction job of the project, for the principal that started it. */
const jobTokenBinding = (projectId: number, jobId: number, subject: string) => ({ entityMatchingJob: [projectId, jobId, subject] });

/** The token a prediction's start answers with (`X-Job-Token`): its results may then be read without assetsAcl:READ. */
export function jobToken(services: Services, projectId: number, jobId: number, subject: string): string {
  return services.cursors.encode({ jobId }, jobTokenBinding(projectId, jobId, subject));
}

/** Whether `token` is the job token of that job for that principal. */
export function validJobToken(services: Services, projectId: number, jobId: number, subject: string, token: unknown): boolean {
  if (typeof token !== 'string' || !Number.isSafeInteger(jobId)) return false;
  try {
    services.cursors.decode(token, jobTokenBinding(projectId, jobId, subject));
    return true;
  } catch {
    return false;
  }
}

export async function predictionResult(services: Services, projectId: number, jobId: number): Promise<Record<string, unknown>> {
  const job = await needJobs(services).jobs.get(services.db, projectId, jobId);
  if (!job || job.kind !== PREDICT_JOB) throw missingItems([{ jobId }]);
  const items = job.state === 'succeeded' ? ((job.result as { items: unknown[] }).items ?? []) : [];
  return { ...jobView(job), items };
}

export function modelFilter(filter: ModelFilter | null | undefined): FilterNode | undefined {
  const c = entityMatchingModel.catalog;
  const f = withoutNulls(filter ?? {});
  return and([
    equalsLeaf(c, 'featureType', f.featureType),
    equalsLeaf(c, 'classifier', f.classifier),
    equalsLeaf(c, 'originalId', f.originalId),
    equalsLeaf(c, 'name', f.name),
    equalsLeaf(c, 'description', f.description),
  ]);
}

interface StoredModel extends ModelSettings {
  dataKey: string;
  fitted: Fitted | null;
  status: string;
}

async function storedModel(runtime: AreaRuntime, projectId: number, id: number): Promise<StoredModel | undefined> {
  const row = await runtime.store.get<Record<string, unknown>>(sql`SELECT feature_type AS "featureType", match_fields AS "matchFields", classifier,
      ignore_missing_fields AS "ignoreMissingFields", data_key AS "dataKey", fitted, status
    FROM entity_matching_models WHERE project_id = ${projectId} AND id = ${id}`);
  if (!row) return undefined;
  return {
    ...(row as unknown as StoredModel),
    matchFields: JSON.parse(row.matchFields as string),
    ignoreMissingFields: Boolean(row.ignoreMissingFields),
    fitted: row.fitted === null ? null : JSON.parse(row.fitted as string),
  };
}

async function setStatus(runtime: AreaRuntime, projectId: number, id: number, status: string, more: { fitted?: Fitted | null; errorMessage?: string } = {}) {
  const now = runtime.now();
  const fitted = more.fitted ? JSON.stringify(more.fitted) : null;
  await runtime.store.transaction((tx) =>
    tx.run(sql`UPDATE entity_matching_models SET status = ${status}, status_time = ${now}, last_updated_time = ${now},
        start_time = CASE WHEN ${status} = 'Running' THEN ${now} ELSE start_time END,
        fitted = ${fitted}, error_message = ${more.errorMessage ?? null}
      WHERE project_id = ${projectId} AND id = ${id}`),
  );
}

/** A failure of the work itself ends the model or prediction at once, with the reason; a stop (cancel, shutdown) does not. */
function failure(error: unknown, signal: AbortSignal): never {
  if (signal.aborted || error instanceof JobFailure) throw error;
  throw new JobFailure(error instanceof Error ? error.message : String(error));
}

async function runFit(runtime: AreaRuntime, job: Job, { signal }: JobContext): Promise<unknown> {
  const { modelId } = job.payload as { modelId: number };
  const model = await storedModel(runtime, job.projectId, modelId);
  // Deleted before its fit ran: nothing to fit.
  if (!model) return {};
  await setStatus(runtime, job.projectId, modelId, 'Running');
  try {
    const data = await readJson<TrainingData>(runtime.blobs, job.projectId, model.dataKey);
    const population = await Population.build(data.sources, data.targets, model.matchFields, model.featureType, signal);
    const pairs = pairsOf(data, data.trueMatches);
    const fitted = pairs.length ? await fit(population, pairs, model.classifier, signal) : null;
    signal.throwIfAborted();
    await setStatus(runtime, job.projectId, modelId, 'Completed', { fitted });
    return {};
  } catch (error) {
    if (!signal.aborted) await setStatus(runtime, job.projectId, modelId, 'Failed', { errorMessage: error instanceof Error ? error.message : String(error) });
    failure(error, signal);
  }
}

interface PredictPayload {
  modelId: number;
  sources?: Entity[];
  targets?: Entity[];
  numMatches: number;
  scoreThreshold: number;
}

async function runPrediction(runtime: AreaRuntime, job: Job, { signal }: JobContext): Promise<unknown> {
  const p = job.payload as PredictPayload;
  const model = await storedModel(runtime, job.projectId, p.modelId);
  if (!model) throw new JobFailure(`The entity matching model ${p.modelId} was deleted before the prediction ran`);
  try {
    const stored = p.sources && p.targets ? undefined : await readJson<TrainingData>(runtime.blobs, job.projectId, model.dataKey);
    const population = await Population.build(p.sources ?? stored!.sources, p.targets ?? stored!.targets, model.matchFields, model.featureType, signal);
    return { items: await predict(population, model.fitted, model.classifier, p.numMatches, p.scoreThreshold, signal) };
  } catch (error) {
    failure(error, signal);
  }
}

export function registerEntityMatchingJobs(runtime: AreaRuntime): void {
  runtime.jobs.register(FIT_JOB, (job, context) => runFit(runtime, job, context), { concurrency: 1, leaseMs: 5 * 60_000 });
  runtime.jobs.register(PREDICT_JOB, (job, context) => runPrediction(runtime, job, context), { concurrency: 1, leaseMs: 5 * 60_000 });
}
