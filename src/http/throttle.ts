/**
 * Throttling: per project and per principal, a request-rate budget (token bucket) and a concurrency maximum,
 * plus whatever an operation declares in `ApiRoute.limits`, all checked together before the request is parsed,
 * validated or handled, so a refused request changes nothing. Over any budget: 429 in the error shape, the
 * message naming the exceeded maximum, and `Retry-After` in whole seconds.
 *
 * Limits: defaults from flags and environment (config.ts), then a project's stored override (the `limits` of
 * its `projects.config`), then STRATA_PROJECT_LIMITS. Budgets live in this process, or in Redis when
 * STRATA_REDIS_URL is set (shared by every process).
 *
 * A concurrency slot is released when the response closes: once it is sent (before the client can have read
 * it and sent its next request), or when the client goes away first (aborted request); exactly once.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { applyLimitsOverride, parseLimitsOverride, type LimitsOverride, type ThrottleConfig, type ThrottleLimits } from '../config.js';
import type { Queryable } from '../storage/store.js';
import { ApiError } from './errors.js';
import { jsonResponseText } from './json-text.js';
import { storedProjectLimits } from '../storage/projects.js';
import { operationName, type ApiRoute, type RouteRate } from './route.js';
import { RedisThrottleStore } from './throttle-redis.js';
import { Denial, MemoryThrottleStore, type Admission, type Bucket, type Gate, type Lease, type Slots, type ThrottleStore } from './throttle-store.js';

/**
 * Admits one request to an operation (after authentication has named the project and principal): true when
 * it may go on, holding its concurrency slots until its response closes; false when it was refused (the 429
 * is sent). A promise only when the budgets live in Redis.
 */
export type Admit = (req: FastifyRequest, reply: FastifyReply) => boolean | Promise<boolean>;

export interface Throttle {
  /** The admission check of one operation. */
  admitter(def: ApiRoute): Admit;
  close(): Promise<void>;
}

export interface ThrottleOptions {
  config: ThrottleConfig;
  db: Queryable;
  routes: readonly ApiRoute[];
  /** Milliseconds; the in-process store refills by this clock (tests step it). */
  now: () => number;
  log: FastifyBaseLogger;
}

type By = 'project' | 'principal' | 'param';

/** One budget a request draws from, as it applies to one project and one operation. */
interface Budget {
  readonly by: By;
  /** The store key, or its prefix when the principal or a parameter value completes it. */
  readonly key: string;
  readonly perSecond: number;
  readonly burst: number;
  readonly max: number;
  /** The operation (`POST /x/{id}`) for an operation's own budget; empty for the project's and principal's. */
  readonly op: string;
  readonly param: string;
}

/** The budgets of one operation in one project, in the shape the store takes. */
interface Plan {
  readonly rates: readonly Budget[];
  readonly buckets: readonly Bucket[];
  readonly concurrency: readonly Budget[];
  readonly slots: readonly Slots[];
  /** The path parameter a per-parameter budget is keyed by, if any. */
  readonly param: string | undefined;
  /** The store's gates by principal (and parameter value): see gateFor. */
  readonly gates: Map<string, Gate>;
}

/** Principals (with parameter values) whose gates a plan keeps; past it the plan starts over. */
const GATES_KEPT = 4096;

/** The lease an admitted request holds, on its response until the response closes. */
const LEASE = Symbol('strata.throttle.lease');
type Held = ServerResponse & { [LEASE]?: Lease };

/** The response's 'close' listener: one function for every response (no closure per request). */
function releaseHeld(this: Held): void {
  const lease = this[LEASE];
  this[LEASE] = undefined;
  lease?.release();
}

/** An operation's own declared budgets, before they are placed in a project. */
interface RouteBudgets {
  readonly id: string;
  readonly op: string;
  readonly rates: ReadonlyArray<{ by: By; rate: number; burst: number }>;
  readonly concurrency: ReadonlyArray<{ by: By; max: number; param: string }>;
}

export async function createThrottle(opts: ThrottleOptions): Promise<Throttle> {
  const { config, db, log } = opts;
  const overrides = new Map<string, LimitsOverride>();
  for (const { name, limits } of await storedProjectLimits(db)) {
    overrides.set(name, parseLimitsOverride(limits, `project "${name}" stored limits (projects.config.limits)`));
  }
  const routeBudgets = new Map<ApiRoute, RouteBudgets>();
  for (const def of opts.routes) routeBudgets.set(def, compileRoute(def));

  const store: ThrottleStore = config.redisUrl ? await RedisThrottleStore.connect(config.redisUrl, log) : new MemoryThrottleStore(opts.now);

  const plans = new Map<string, Map<RouteBudgets, Plan>>();
  const limitsOf = new Map<string, ThrottleLimits>();

  /** A project's budgets: known ones at once, a project seen for the first time after a read of its stored limits. */
  function projectLimits(project: string): ThrottleLimits | Promise<ThrottleLimits> {
    const limits = limitsOf.get(project);
    return limits ?? readProjectLimits(project);
  }

  async function readProjectLimits(project: string): Promise<ThrottleLimits> {
    let stored = overrides.get(project);
    if (stored === undefined) {
      // No override at start-up (or a project created since by another process): look once more, then keep it.
      try {
        const raw = (await storedProjectLimits(db, project))[0]?.limits;
        stored = raw === undefined ? {} : parseLimitsOverride(raw, `project "${project}" stored limits (projects.config.limits)`);
      } catch (err) {
        log.error({ err }, `ignoring the stored limits of project "${project}"`);
        stored = {};
      }
    }
    const limits = applyLimitsOverride(applyLimitsOverride(config.limits, stored), config.projectLimits[project]);
    limitsOf.set(project, limits);
    return limits;
  }

  /** The plan of a project and operation: kept, so that only a project's first request waits for it. */
  function planFor(project: string, route: RouteBudgets): Plan | Promise<Plan> {
    const plan = plans.get(project)?.get(route);
    if (plan) return plan;
    const limits = projectLimits(project);
    return limits instanceof Promise ? limits.then((l) => keepPlan(project, route, l)) : keepPlan(project, route, limits);
  }

  function keepPlan(project: string, route: RouteBudgets, limits: ThrottleLimits): Plan {
    let byRoute = plans.get(project);
    if (!byRoute) plans.set(project, (byRoute = new Map()));
    let plan = byRoute.get(route);
    if (!plan) byRoute.set(route, (plan = buildPlan(project, limits, route)));
    return plan;
  }

  function admitter(def: ApiRoute): Admit {
    const route = routeBudgets.get(def) ?? compileRoute(def);

    function settle(req: FastifyRequest, reply: FastifyReply, plan: Plan, result: Admission): boolean {
      // Refused here, without an Error and the error handler: under a flood of refusals their cost is the server's.
      if (result instanceof Denial) {
        refuse(reply, tooMany(plan, result, req));
        return false;
      }
      // 'close' comes once per response: after it is sent (before the client can send its next request on the
      // connection), or when the client went away first. A client that left while the request waited (for
      // authentication, or for Redis) closed it already.
      const res: Held = reply.raw;
      if (res.closed || res.destroyed) result.release();
      else {
        res[LEASE] = result;
        res.on('close', releaseHeld);
      }
      return true;
    }

    function admitOn(req: FastifyRequest, reply: FastifyReply, plan: Plan): boolean | Promise<boolean> {
      const subject = req.principal!.subject;
      const value = plan.param === undefined ? '' : String((req.params as Record<string, unknown>)[plan.param]);
      const result = gateFor(store, plan, subject, value).acquire();
      return result instanceof Promise ? result.then((r) => settle(req, reply, plan, r)) : settle(req, reply, plan, result);
    }

    return function admit(req, reply) {
      const plan = planFor(req.project!.name, route);
      return plan instanceof Promise ? plan.then((p) => admitOn(req, reply, p)) : admitOn(req, reply, plan);
    };
  }

  return { admitter, close: () => store.close() };
}

/**
 * A request's gate in the store, kept per plan for the principals (and parameter values) seen lately: its keys
 * are built and bound once, and a request's admission does no lookups by key.
 */
function gateFor(store: ThrottleStore, plan: Plan, subject: string, value: string): Gate {
  // The subject's length first: no two (subject, value) pairs make the same id.
  const id = plan.param === undefined ? subject : `${subject.length}:${subject}${value}`;
  let gate = plan.gates.get(id);
  if (gate === undefined) {
    if (plan.gates.size >= GATES_KEPT) plan.gates.clear();
    gate = store.bind(plan.buckets, keysOf(plan.rates, subject, value), plan.slots, keysOf(plan.concurrency, subject, value));
    plan.gates.set(id, gate);
  }
  return gate;
}

function keysOf(budgets: readonly Budget[], subject: string, value: string): string[] {
  const keys = new Array<string>(budgets.length);
  for (let i = 0; i < budgets.length; i++) {
    const b = budgets[i];
    keys[i] = b.by === 'project' ? b.key : b.key + (b.by === 'principal' ? subject : value);
  }
  return keys;
}

function checkDeclared(op: string, what: string, n: number, integer: boolean): number {
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new Error(`${op}: limits.${what} must be a ${integer ? 'whole number of at least 1' : 'number above 0'}, got ${n}`);
  }
  return n;
}

function compileRoute(def: ApiRoute): RouteBudgets {
  const op = operationName(def);
  const rates: Array<{ by: By; rate: number; burst: number }> = [];
  const concurrency: Array<{ by: By; max: number; param: string }> = [];
  const rate = (by: By, r: RouteRate | undefined) => {
    if (!r) return;
    const perSecond = checkDeclared(op, `rate.per${by === 'project' ? 'Project' : 'Principal'}.rate`, r.rate, false);
    const burst = r.burst === undefined ? Math.max(1, Math.ceil(perSecond * 2)) : checkDeclared(op, 'rate burst', r.burst, true);
    rates.push({ by, rate: perSecond, burst });
  };
  rate('project', def.limits?.rate?.perProject);
  rate('principal', def.limits?.rate?.perPrincipal);
  const c = def.limits?.concurrency;
  if (c?.perProject !== undefined) concurrency.push({ by: 'project', max: checkDeclared(op, 'concurrency.perProject', c.perProject, true), param: '' });
  if (c?.perPrincipal !== undefined) concurrency.push({ by: 'principal', max: checkDeclared(op, 'concurrency.perPrincipal', c.perPrincipal, true), param: '' });
  if (c?.perParam !== undefined) {
    if (!def.path.includes(`:${c.perParam.param}`)) throw new Error(`${op}: limits.concurrency.perParam names "${c.perParam.param}", which is not a path parameter`);
    concurrency.push({ by: 'param', max: checkDeclared(op, 'concurrency.perParam.max', c.perParam.max, true), param: c.perParam.param });
  }
  return { id: `${def.method} ${def.path}`, op, rates, concurrency };
}

/**
 * Keys: `strata:{project}:...`; the braces keep one project's keys in one Redis Cluster slot, and the
 * principal's subject or the parameter value always comes last so no two budgets can share a key.
 */
function buildPlan(project: string, limits: ThrottleLimits, route: RouteBudgets): Plan {
  const base = `strata:{${project}}:`;
  const rates: Budget[] = [
    budget('project', `${base}rate`, limits.project.rate, limits.project.burst, 0),
    budget('principal', `${base}rate:principal:`, limits.principal.rate, limits.principal.burst, 0),
  ];
  for (const r of route.rates) {
    rates.push(budget(r.by, `${base}op:${route.id}:rate${r.by === 'principal' ? ':principal:' : ''}`, r.rate, r.burst, 0, route.op));
  }
  const concurrency: Budget[] = [
    budget('project', `${base}conc`, 0, 0, limits.project.concurrency),
    budget('principal', `${base}conc:principal:`, 0, 0, limits.principal.concurrency),
  ];
  let param: string | undefined;
  for (const c of route.concurrency) {
    const suffix = c.by === 'principal' ? ':principal:' : c.by === 'param' ? `:param:${c.param}:` : '';
    concurrency.push(budget(c.by, `${base}op:${route.id}:conc${suffix}`, 0, 0, c.max, route.op, c.param));
    if (c.by === 'param') param = c.param;
  }
  return {
    rates,
    buckets: rates.map((b) => ({ perMs: b.perSecond / 1000, burst: b.burst })),
    concurrency,
    slots: concurrency.map((b) => ({ max: b.max })),
    param,
    gates: new Map(),
  };
}

function budget(by: By, key: string, perSecond: number, burst: number, max: number, op = '', param = ''): Budget {
  return { by, key, perSecond, burst, max, op, param };
}

function fmtRate(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6)));
}

/** Answers 429 in the error shape. */
function refuse(reply: FastifyReply, { message, retryAfter }: { message: string; retryAfter: number }): void {
  reply
    .code(429)
    .header('retry-after', String(retryAfter))
    .type('application/json; charset=utf-8')
    .send(jsonResponseText(new ApiError(429, message).body()));
}

function tooMany(plan: Plan, denial: Denial, req: FastifyRequest): { message: string; retryAfter: number } {
  const isRate = denial.index < plan.rates.length;
  const b = isRate ? plan.rates[denial.index] : plan.concurrency[denial.index - plan.rates.length];
  const project = req.project!.name;
  const subject = req.principal!.subject;
  const retryAfter = Math.max(1, Math.ceil(denial.retryAfterMs / 1000));
  const who =
    b.by === 'project'
      ? `project "${project}"`
      : b.by === 'principal'
        ? `principal "${subject}" in project "${project}"`
        : `${b.param} ${String((req.params as Record<string, unknown>)[b.param])} in project "${project}"`;
  const scope = b.op ? `${b.op} for ${who}` : who;
  const message = isRate
    ? `Request rate exceeded for ${scope}: at most ${fmtRate(b.perSecond)} request${b.perSecond === 1 ? ' per second is' : 's per second are'} allowed (bursts of up to ${b.burst}); retry after ${retryAfter} s`
    : `Too many concurrent requests for ${scope}: at most ${b.max} concurrent request${b.max === 1 ? ' is' : 's are'} allowed; retry after ${retryAfter} s`;
  return { message, retryAfter };
}
