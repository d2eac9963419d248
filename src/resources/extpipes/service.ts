/**
 * Extraction pipelines: their own rules on top of the shared item operations. A pipeline is written into a
 * data set the request sees and may read (`datasetsAcl:READ` on it); its schedule is one the reference
 * accepts, and a cron expression one that parses. Configuration revisions and runs are reached through their
 * pipeline's external id, within the request's scope; a run reported moves the pipeline's last success,
 * failure, seen time and message forward.
 */
import { accessFor, inScope } from '../../auth/access.js';
import { formatCapability, grantsFor, type Capability, type Principal } from '../../auth/principal.js';
import { badRequest, forbidden, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { and, equalsLeaf, inLeaf, isNullNode, metadataNode, prefixLeaf, propertyTarget, rangeLeaf } from '../../query/basic.js';
import type { FilterNode } from '../../query/filter.js';
import { resolveReferences } from '../../query/references.js';
import { visibleIn } from '../../query/visibility.js';
import type { Item, Values } from '../../storage/items.js';
import { cronOf, InvalidSchedule } from '../../storage/jobs/schedules.js';
import { likeLiteral, Sql, sql } from '../../storage/sql.js';
import { createItems, fromModel, getItem, inWrite, listItems, underParent, updateItems, type Path, type ResourceSpec, type UpdateItem } from '../crud.js';
import { dataSetCatalog } from '../datasets/model.js';
import { configRevisionModel, pipelineModel, runModel } from './model.js';
import type { CreateConfigBody, PipelineCreate, PipelineFilter, RunCreate, RunFilter } from './schema.js';

const catalog = pipelineModel.catalog;
/** Kept by the runs reported, never by a request. */
const RUN_FIELDS = ['lastSuccess', 'lastFailure', 'lastSeen', 'lastMessage'];

const NAMED = /^@(annually|yearly|monthly|weekly|daily|hourly)$/;
const EVERY = /^@every (\d+(ns|us|µs|ms|s|m|h))+$/;
// Five to seven fields of numbers, lists, ranges, steps and `*`, as the reference's pattern has them.
const CRON = /^(((\d+,)+\d+|\d+[/-]\d+|\d+|\*(\/\d+)?) ?){5,7}$/;

function checkSchedule(schedule: string, path: Path): void {
  if (schedule === 'On trigger' || schedule === 'Continuous' || schedule === '@reboot' || EVERY.test(schedule)) return;
  if (!NAMED.test(schedule) && !CRON.test(schedule)) {
    throw badRequest(
      `${formatPath(path)}: ${JSON.stringify(schedule)} is not a schedule; give "On trigger", "Continuous", a cron expression ` +
        `of 5 to 7 fields such as "0 */2 * * *", @hourly (or @daily, @weekly, @monthly, @yearly, @reboot) or @every 15m`,
    );
  }
  try {
    cronOf(schedule.trim(), 'UTC');
  } catch (error) {
    if (error instanceof InvalidSchedule) throw badRequest(`${formatPath(path)}: ${error.message}`);
    throw error;
  }
}

export const pipelineSpec: ResourceSpec<PipelineCreate> = {
  ...fromModel(pipelineModel),
  createValues: () => ({ lastSuccess: 0, lastFailure: 0, lastSeen: 0 }),
  references: [{ field: 'dataSetId', catalog: dataSetCatalog }],
  check(values: Values, path: Path) {
    if (typeof values.schedule === 'string') checkSchedule(values.schedule, [...path, 'schedule']);
  },
  checkUpdate(_current: Values, update: Record<string, unknown>, path: Path) {
    const field = RUN_FIELDS.find((f) => update[f] !== undefined);
    if (field) throw badRequest(`${formatPath([...path, field])}: ${field} is kept by the runs reported for the pipeline (POST /extpipes/runs) and cannot be updated`);
  },
};
const spec = pipelineSpec as ResourceSpec<unknown>;

const DATA_SET_READ: Capability = { acl: 'datasetsAcl', action: 'READ' };

/**
 * Refuses (403) data sets a pipeline is written into without `datasetsAcl:READ` on them. It runs after the
 * write, in its transaction, once the write has refused data sets that do not exist or that the request
 * does not see (400, as for an unknown one).
 */
function requireReadableDataSets(principal: Principal, project: { name: string }, targets: ReadonlyArray<{ dataSetId: number; path: Path }>): void {
  const access = accessFor(DATA_SET_READ, grantsFor(principal, DATA_SET_READ, project.name));
  for (const t of targets) {
    if (inScope(access, { id: t.dataSetId, dataSetId: t.dataSetId })) continue;
    throw forbidden(`${formatPath(t.path)}: writing an extraction pipeline into data set ${t.dataSetId} needs ${formatCapability(DATA_SET_READ)} on it`);
  }
}

export function createPipelines(services: Services, principal: Principal, project: { id: number; name: string }, items: readonly PipelineCreate[]) {
  return inWrite(services, async (services) => {
    const created = await createItems(pipelineSpec, services, project.id, items);
    requireReadableDataSets(principal, project, items.map((item, i) => ({ dataSetId: item.dataSetId!, path: ['items', i, 'dataSetId'] })));
    return created;
  });
}

export function updatePipelines(
  services: Services,
  principal: Principal,
  project: { id: number; name: string },
  items: ReadonlyArray<UpdateItem & { update: { dataSetId?: { set: number } } }>,
) {
  return inWrite(services, async (services) => {
    const updated = await updateItems(spec, services, project.id, items);
    const targets = items.flatMap((item, i) => (item.update.dataSetId ? [{ dataSetId: item.update.dataSetId.set, path: ['items', i, 'update', 'dataSetId', 'set'] }] : []));
    requireReadableDataSets(principal, project, targets);
    return updated;
  });
}

/** Pipelines whose JSON list columns hold an object with the fields (those not null) of each one given. */
function listsHoldingNode(services: Services, projectId: number, lists: Record<string, ReadonlyArray<Record<string, string | boolean | null | undefined>> | undefined>): FilterNode | undefined {
  const { dialect } = services.db;
  const holds = Object.entries(lists).flatMap(([column, wanted]) =>
    (wanted ?? []).map((item) => {
      const fields = Object.fromEntries(Object.entries(item).filter((e): e is [string, string | boolean] => e[1] !== null && e[1] !== undefined));
      return dialect.jsonListHasObject(Sql.raw(column), fields);
    }),
  );
  if (holds.length === 0) return undefined;
  const ids = sql`SELECT id FROM extpipes WHERE project_id = ${projectId}${Sql.join(holds.map((h) => sql` AND ${h}`), '')}`;
  return { op: 'inSet', target: propertyTarget(catalog, 'id'), ids };
}

/** The list filter as filter language; its data sets are resolved among those the request sees. */
export async function pipelineFilterNode(f: PipelineFilter | undefined, services: Services, projectId: number): Promise<FilterNode | undefined> {
  if (!f) return undefined;
  const dataSetIds = f.dataSetIds && (await resolveReferences(services.db, visibleIn(services, dataSetCatalog), projectId, f.dataSetIds, ['filter', 'dataSetIds']));
  return and([
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
    equalsLeaf(catalog, 'name', f.name),
    equalsLeaf(catalog, 'description', f.description),
    dataSetIds && inLeaf(catalog, 'dataSetId', dataSetIds),
    f.schedule === 'Null' ? isNullNode(catalog, 'schedule', true) : equalsLeaf(catalog, 'schedule', f.schedule),
    metadataNode(catalog, f.metadata),
    equalsLeaf(catalog, 'source', f.source),
    equalsLeaf(catalog, 'documentation', f.documentation),
    equalsLeaf(catalog, 'createdBy', f.createdBy),
    listsHoldingNode(services, projectId, { contacts: f.contacts, raw_tables: f.rawTables }),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
  ]);
}

// Configuration revisions.

type Revision = Item & { revision: number; config?: string; description?: string };

const configSpec: ResourceSpec<{ revision: number; config?: string; description?: string | null }> = fromModel(configRevisionModel);

function configsOf(services: Services, projectId: number, externalId: string, path: Path) {
  return underParent(configSpec, spec, services, projectId, { externalId }, path);
}

/** A revision as the API gives it: with its pipeline's external id, and without an update time (revisions never change). */
function revisionJson(externalId: string, { lastUpdatedTime: _, ...revision }: Item): Record<string, unknown> {
  return { externalId, ...revision };
}

const NEWEST_FIRST = [{ property: ['revision'], order: 'desc' as const }];

export function createConfig(services: Services, projectId: number, body: CreateConfigBody, from?: Revision) {
  return inWrite(services, async (services) => {
    const under = await configsOf(services, projectId, body.externalId, ['externalId']);
    const newest = await services.db.get<{ n: number | null }>(sql`SELECT max(revision) AS n FROM extpipe_configs WHERE project_id = ${projectId} AND extpipe_id = ${under.parentId!}`);
    const revision = Number(newest?.n ?? 0) + 1;
    const content = from ? { config: from.config ?? null, description: from.description ?? null } : { config: body.config ?? null, description: body.description ?? null };
    const [created] = await createItems(under, services, projectId, [{ revision, ...content } as { revision: number }]);
    return revisionJson(body.externalId, created);
  });
}

/** The revision asked for: a given one, the newest created at or before `activeAtTime`, or the newest. */
export async function getConfig(services: Services, projectId: number, q: { externalId: string; revision?: number; activeAtTime?: number }) {
  const under = (await configsOf(services, projectId, q.externalId, ['externalId'])) as ResourceSpec<unknown>;
  if (q.revision) return revisionJson(q.externalId, await getItem(under, services, projectId, { revision: q.revision }));
  const before = q.activeAtTime ? rangeLeaf(configRevisionModel.catalog, 'createdTime', { max: q.activeAtTime }) : undefined;
  const [found] = (await listItems(under, services, projectId, { sort: NEWEST_FIRST, limit: 1 }, before)).items;
  if (!found) {
    const when = q.activeAtTime ? ` created at or before ${q.activeAtTime}` : '';
    throw badRequest(`The extraction pipeline ${JSON.stringify({ externalId: q.externalId })} has no configuration revision${when}`);
  }
  return revisionJson(q.externalId, found);
}

const WITHOUT_CONFIG = new Set(['config']);

export async function listRevisions(services: Services, projectId: number, q: { externalId: string; limit?: number; cursor?: string }) {
  const under = (await configsOf(services, projectId, q.externalId, ['externalId'])) as ResourceSpec<unknown>;
  const page = await listItems(under, services, projectId, { sort: NEWEST_FIRST, limit: q.limit, cursor: q.cursor }, undefined, WITHOUT_CONFIG);
  return { ...page, items: page.items.map((r) => revisionJson(q.externalId, r)) };
}

export function revertConfig(services: Services, projectId: number, body: { externalId: string; revision: number }) {
  return inWrite(services, async (services) => {
    const under = (await configsOf(services, projectId, body.externalId, ['externalId'])) as ResourceSpec<unknown>;
    const old = (await getItem(under, services, projectId, { revision: body.revision })) as Revision;
    return createConfig(services, projectId, { externalId: body.externalId }, old);
  });
}

// Runs.

type RunValues = Pick<RunCreate, 'status' | 'message' | 'createdTime'>;

const runSpec: ResourceSpec<RunValues> = {
  ...fromModel(runModel),
  createValues: (run) => ({ messageLc: run.message?.toLowerCase() ?? null }),
  createdTimeOf: (run) => run.createdTime ?? undefined,
};

function runsOf(services: Services, projectId: number, externalId: string, path: Path) {
  return underParent(runSpec, spec, services, projectId, { externalId }, path);
}

/** A run as the API gives it: without an update time (runs never change). */
function runJson({ lastUpdatedTime: _, ...run }: Item): Record<string, unknown> {
  return run;
}

/** Moves a pipeline's last success, failure and seen times forward to its newest runs', with the newest failure's message. */
async function recordRuns(services: Services, projectId: number, pipelineId: number, runs: readonly Item[]): Promise<void> {
  const newest = (status?: string) => runs.filter((r) => !status || r.status === status).reduce<Item | undefined>((a, r) => (a && a.createdTime >= r.createdTime ? a : r), undefined);
  const seen = newest()!.createdTime;
  const success = newest('success')?.createdTime ?? -1;
  const failure = newest('failure');
  const failed = failure?.createdTime ?? -1;
  await services.db.run(sql`UPDATE extpipes SET
    last_seen = CASE WHEN last_seen < ${seen} THEN ${seen} ELSE last_seen END,
    last_success = CASE WHEN last_success < ${success} THEN ${success} ELSE last_success END,
    last_message = CASE WHEN last_failure <= ${failed} THEN ${(failure?.message as string | undefined) ?? null} ELSE last_message END,
    last_failure = CASE WHEN last_failure <= ${failed} THEN ${failed} ELSE last_failure END
    WHERE project_id = ${projectId} AND id = ${pipelineId}`);
}

export function createRuns(services: Services, projectId: number, items: readonly RunCreate[]) {
  return inWrite(services, async (services) => {
    const out: Array<Record<string, unknown>> = [];
    const byPipeline = new Map<string, number[]>();
    for (const [i, item] of items.entries()) byPipeline.set(item.externalId, [...(byPipeline.get(item.externalId) ?? []), i]);
    for (const [externalId, indexes] of byPipeline) {
      const under = await runsOf(services, projectId, externalId, ['items', indexes[0], 'externalId']);
      const runs = indexes.map((i) => ({ status: items[i].status, message: items[i].message, createdTime: items[i].createdTime }));
      const created = await createItems(under, services, projectId, runs);
      await recordRuns(services, projectId, under.parentId!, created);
      for (const [k, i] of indexes.entries()) out[i] = { ...runJson(created[k]), externalId };
    }
    return out;
  });
}

const rcatalog = runModel.catalog;

export async function listRuns(services: Services, projectId: number, req: { filter: RunFilter; limit?: number; cursor?: string | null }, path: Path) {
  const { filter } = req;
  const under = (await runsOf(services, projectId, filter.externalId, path)) as ResourceSpec<unknown>;
  const substring = filter.message?.substring?.toLowerCase();
  const message: FilterNode | undefined = substring
    ? {
        op: 'inSet',
        target: propertyTarget(rcatalog, 'id'),
        ids: sql`SELECT id FROM extpipe_runs WHERE project_id = ${projectId} AND message_lc LIKE ${`%${likeLiteral(substring)}%`} ESCAPE '\\'`,
      }
    : undefined;
  const node = and([
    filter.statuses?.length ? inLeaf(rcatalog, 'status', filter.statuses) : undefined,
    rangeLeaf(rcatalog, 'createdTime', filter.createdTime),
    message,
  ]);
  const page = await listItems(under, services, projectId, { filter, sort: [{ property: ['createdTime'], order: 'desc' }], limit: req.limit, cursor: req.cursor }, node);
  return { ...page, items: page.items.map(runJson) };
}
