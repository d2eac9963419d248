/**
 * The checks of a container against the data it holds, asked for when a container that exists changes (or
 * by the retry operations): building the database index of a btree index or a uniqueness constraint added
 * to it, and validating a bound that appeared or tightened (nullability, maxListSize, maxTextSize) or a
 * `requires` constraint added to it against the stored instances. Each is `pending` in the container's
 * states from the apply that asks for it until it is done, then `current`, or `failed`: a uniqueness
 * constraint whose values stored instances share (writes still keep new values unique, through a plain
 * index of its columns), a bound or requires constraint some stored instance breaks, an index the engine
 * could not build.
 *
 * A check reads or indexes every instance of the container, so it does not run in the apply: the apply
 * starts one durable job (storage/jobs) for the container's checks, in its transaction, and answers. The
 * job builds indexes through the store, outside any transaction and off the event loop (Store.buildIndex),
 * reads for the validations on the read workers, and sets each state in a short transaction of its own,
 * only while the check is still pending and asks for the same thing (an index deleted meanwhile has the
 * index just built dropped). Writes follow the new definition from the apply on, so a validation of the data
 * stored when it runs is the container's state. A check cut short by a stopped process is run again when
 * another process takes the job over; one that cannot be done after the job's attempts ends `failed`, and
 * the job's result says why each check failed.
 *
 * Outside an app (the global layer's seeding, which only a new catalog of system models changes) there is
 * no job runner, and the checks run in the apply's transaction.
 */
import type { AreaRuntime } from '../../http/area.js';
import type { Dialect } from '../../storage/dialect.js';
import type { Job, JobContext, Jobs } from '../../storage/jobs/jobs.js';
import { holdLock } from '../../storage/locks.js';
import { inProcessReader, type Reader } from '../../storage/read-pool.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable, Store } from '../../storage/store.js';
import { createIndexSql, type IndexBuild, type TableIndex } from '../../storage/table-index.js';
import type { Bound } from './container-changes.js';
import { dropIndex, tableIndexOf } from './container-tables.js';
import type { Constraint, ContainerStates } from './containers.js';
import type { State } from './container-schema.js';
import { containerKey } from './identifiers.js';
import { isList, textSizeLimit } from './property-types.js';
import { containerById, loadSchema, saveContainer, schemaChanged, type ProjectSchema, type StoredContainer } from './schema-store.js';

/** One check of a container: of an index, of a constraint, or of a bound of a property. */
export type Check = { kind: 'indexes'; id: string } | { kind: 'constraints'; id: string } | { kind: 'properties'; id: string; bound: Bound };

interface ChecksPayload {
  container: number;
  checks: Check[];
}

const JOB_KIND = 'models.containerChecks';

type Outcome = { state: 'current' } | { state: 'failed'; reason: string };

/** How checks reach the data: reads (in the engine's SQL), and index builds. */
interface CheckRunner {
  reads: Reader;
  dialect: Dialect;
  build(index: TableIndex): Promise<IndexBuild>;
}

/** The state of a check in `states`; undefined where it has none (an index or constraint that is not there). */
export function checkState(states: ContainerStates, check: Check): State | undefined {
  return check.kind === 'properties' ? states.properties?.[check.id]?.[check.bound] : states[check.kind]?.[check.id];
}

function setCheckState(states: ContainerStates, check: Check, state: State): void {
  if (check.kind === 'properties') ((states.properties ??= {})[check.id] ??= {})[check.bound] = state;
  else (states[check.kind] ??= {})[check.id] = state;
}

/** The database index a check builds, when it builds one. */
const indexOf = (c: StoredContainer, check: Check): TableIndex | undefined =>
  check.kind === 'properties' ? undefined : tableIndexOf(c.definition, c.layout, check.kind, check.id);

/** What a check says of the container's data now. */
async function runCheck(runner: CheckRunner, projectId: number, schema: ProjectSchema, c: StoredContainer, check: Check): Promise<Outcome> {
  const index = indexOf(c, check);
  if (index) {
    if ((await runner.build(index)) === 'built') return { state: 'current' };
    // Only a unique index meets duplicates: the index of a uniqueness constraint. A plain index of its name
    // takes its place, for the writes that keep new values unique while it has failed (instance-writes-store.ts).
    await runner.build({ ...index, unique: false });
    const x = c.definition.constraints[check.id] as Extract<Constraint, { constraintType: 'uniqueness' }>;
    return { state: 'failed', reason: `stored instances share values of ${x.properties.join(', ')}` };
  }
  if (check.kind === 'properties') return boundState(runner, projectId, c, check.id, check.bound);
  // What is left is a requires constraint: the indexes asked for (requestChecks) and uniqueness constraints have a database index.
  const x = c.definition.constraints[check.id] as Extract<Constraint, { constraintType: 'requires' }>;
  return requiresState(runner.reads, projectId, c, schema.stored(x.require));
}


const failedWhen = (broken: number, reason: string): Outcome => (broken > 0 ? { state: 'failed', reason: `${broken} stored instance${broken === 1 ? '' : 's'} ${reason}` } : { state: 'current' });

async function boundState({ reads, dialect }: CheckRunner, projectId: number, c: StoredContainer, property: string, bound: Bound): Promise<Outcome> {
  const p = c.definition.properties[property];
  const column = Sql.raw(c.layout.columns[property]);
  let broken: Sql;
  if (bound === 'nullability') broken = sql`${column} IS NULL`;
  else if (bound === 'maxListSize') broken = sql`${dialect.jsonLength(column)} > ${p.type.type === 'enum' ? 1 : (p.type.maxListSize ?? 0)}`;
  else if (isList(p.type)) broken = sql`EXISTS (SELECT 1 FROM (${dialect.jsonElements(column, 'text')}) e WHERE length(e.value) * 4 > ${textSizeLimit(p.type)} AND ${dialect.byteLength(Sql.raw('e.value'))} > ${textSizeLimit(p.type)})`;
  else broken = sql`${dialect.byteLength(column)} > ${textSizeLimit(p.type)}`;
  const [row] = await reads.all<{ n: number }>(sql`SELECT count(*) AS n FROM ${Sql.raw(c.layout.table)} WHERE project_id = ${projectId} AND ${broken}`, { scan: true });
  return failedWhen(Number(row.n), `break the ${bound} of ${property}`);
}

async function requiresState(reads: Reader, projectId: number, c: StoredContainer, required: StoredContainer | undefined): Promise<Outcome> {
  if (!required) return { state: 'failed', reason: 'the required container does not exist' };
  const [row] = await reads.all<{ n: number }>(
    sql`SELECT count(*) AS n FROM ${Sql.raw(c.layout.table)} a WHERE a.project_id = ${projectId} AND NOT EXISTS (SELECT 1 FROM ${Sql.raw(
      required.layout.table,
    )} b WHERE b.project_id = a.project_id AND b.space = a.space AND b.instance_id = a.instance_id)`,
    { scan: true },
  );
  return failedWhen(Number(row.n), `have no data in ${containerKey(required.definition)}`);
}

/**
 * Asks for `checks` of the container `c` (changed in the caller's transaction `db`, which stores it after):
 * with a job runner, marks them pending and starts the job that does them; without one, does them here.
 * Checks already pending are left to the job doing them; an inverted index, which has no database index,
 * has nothing to check and stays current.
 */
export async function requestChecks(jobs: Jobs | undefined, db: Queryable, projectId: number, schema: ProjectSchema, c: StoredContainer, checks: readonly Check[]): Promise<void> {
  const wanted = checks.filter((check) => checkState(c.states, check) !== 'pending' && (check.kind !== 'indexes' || indexOf(c, check) !== undefined));
  if (wanted.length === 0) return;
  if (jobs) {
    for (const check of wanted) setCheckState(c.states, check, 'pending');
    await jobs.start(db, { projectId, kind: JOB_KIND, payload: { container: c.id, checks: wanted } satisfies ChecksPayload });
    return;
  }
  const runner: CheckRunner = { reads: inProcessReader(db), dialect: db.dialect, build: (index) => db.run(Sql.raw(createIndexSql(index))).then(() => 'built') };
  for (const check of wanted) setCheckState(c.states, check, (await runCheck(runner, projectId, schema, c, check)).state);
}

/** Runs the checks of containers in this process: builds (SQLite's take the write lock) one at a time. */
export function registerContainerChecks({ jobs, store, reads, now }: AreaRuntime): void {
  jobs.register(JOB_KIND, (job, context) => runChecks({ reads, dialect: store.dialect, build: (index) => store.buildIndex(index) }, store, now, job, context), { concurrency: 1 });
}

async function runChecks(runner: CheckRunner, store: Store, now: () => number, job: Job, { signal }: JobContext) {
  const { container, checks } = job.payload as ChecksPayload;
  const done: Array<{ check: Check } & Outcome> = [];
  for (const check of checks) {
    if (signal.aborted) break;
    const schema = await loadSchema(store, job.projectId);
    const c = [...schema.containers.values()].find((s) => s.id === container && !s.isGlobal);
    if (!c || checkState(c.states, check) !== 'pending') continue;
    const index = indexOf(c, check);
    let outcome: Outcome;
    try {
      outcome = await runCheck(runner, job.projectId, schema, c, check);
    } catch (error) {
      // Retried until the job's attempts are spent; then the check has failed.
      if (job.attempts < job.maxAttempts) throw error;
      outcome = { state: 'failed', reason: error instanceof Error ? error.message : String(error) };
    }
    await settle(store, job.projectId, container, check, index?.name, outcome, now());
    done.push({ check, ...outcome });
  }
  return { checks: done };
}

/**
 * Sets the state a check came to, if it is still pending on the container (a check asked for again, or of
 * something deleted meanwhile, has nothing to set), and drops an index built for an index or constraint that
 * was deleted meanwhile.
 */
async function settle(store: Store, projectId: number, container: number, check: Check, built: string | undefined, outcome: Outcome, now: number): Promise<void> {
  await store.transaction(async (db) => {
    // After a change of the schema under way: the container is read and written whole.
    await holdLock(db, 'schema', projectId);
    const c = await containerById(db, projectId, container);
    if (!c) return;
    if (built !== undefined && indexOf(c, check)?.name !== built) {
      await dropIndex(db, built);
      return;
    }
    if (checkState(c.states, check) !== 'pending') return;
    setCheckState(c.states, check, outcome.state);
    await saveContainer(db, projectId, { ...c, lastUpdatedTime: now });
    await schemaChanged(db, projectId);
  });
}
