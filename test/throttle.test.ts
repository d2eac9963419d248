/**
 * Throttling: rate and concurrency budgets per project and per principal, operation maxima declared on routes,
 * 429 with a message naming the maximum and Retry-After, nothing changed by a refused request, configuration
 * (flags, environment, per-project overrides) and refusal of nonsense limits.
 */
import { sql } from '../src/storage/sql.js';
import { spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { route } from '../src/http/route.js';
import { openTestStore } from './support/test-store.js';
import { ensureProjects } from '../src/storage/projects.js';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, type Harness } from './support/harness.js';
import { Holds, manualClock, startCustomHarness, type CustomHarnessOptions } from './support/custom-harness.js';
import { freePort } from './support/net.js';
import { hasRedis, startRedisServer, type RedisServer } from './support/redis-server.js';

const open: Harness[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

async function start(opts: CustomHarnessOptions): Promise<Harness> {
  const h = await startCustomHarness(opts);
  open.push(h);
  return h;
}

async function eventCount(h: Harness): Promise<number> {
  return (await h.strata.services.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM events`))!.n;
}

describe('request rate', () => {
  it('answers 429 with Retry-After once the project bucket is empty, and refills with time', async () => {
    const clock = manualClock();
    const h = await start({ env: { STRATA_RATE_LIMIT: '2', STRATA_RATE_BURST: '3' }, build: { now: clock.now } });
    for (let i = 0; i < 3; i++) expect((await h.get('/events')).status).toBe(200);
    const refused = await h.get('/events');
    expect(errorMessage(refused, 429)).toBe(
      'Request rate exceeded for project "dev": at most 2 requests per second are allowed (bursts of up to 3); retry after 1 s',
    );
    expect(refused.headers['retry-after']).toBe('1');
    clock.advance(499);
    expect((await h.get('/events')).status).toBe(429);
    clock.advance(1);
    expect((await h.get('/events')).status).toBe(200);
    expect((await h.get('/events')).status).toBe(429);
  });

  it('says how long to wait when refill is slow', async () => {
    const clock = manualClock();
    const h = await start({ env: { STRATA_RATE_LIMIT: '0.1', STRATA_RATE_BURST: '1' }, build: { now: clock.now } });
    expect((await h.get('/events')).status).toBe(200);
    const refused = await h.get('/events');
    expect(errorMessage(refused, 429)).toMatch(/at most 0\.1 requests per second .*retry after 10 s/);
    expect(refused.headers['retry-after']).toBe('10');
    clock.advance(7500);
    expect((await h.get('/events')).headers['retry-after']).toBe('3');
    clock.advance(2500);
    expect((await h.get('/events')).status).toBe(200);
  });

  it('budgets each principal within the project, and each project on its own', async () => {
    const clock = manualClock();
    const h = await start({ env: { STRATA_PRINCIPAL_RATE_LIMIT: '1', STRATA_PRINCIPAL_RATE_BURST: '2' }, build: { now: clock.now } });
    expect((await h.get('/events')).status).toBe(200);
    expect((await h.get('/events')).status).toBe(200);
    expect(errorMessage(await h.get('/events'), 429)).toBe(
      'Request rate exceeded for principal "strata-admin" in project "dev": at most 1 request per second is allowed (bursts of up to 2); retry after 1 s',
    );
    expect((await h.get('/api/v1/projects/other/events')).status).toBe(200);
  });

  it('changes nothing when it refuses a write, and refuses before validating the body', async () => {
    const clock = manualClock();
    const h = await start({ env: { STRATA_RATE_LIMIT: '1', STRATA_RATE_BURST: '1' }, build: { now: clock.now } });
    expect((await h.post('/events', { items: [{ externalId: 'first' }] })).status).toBe(201);
    expect(await eventCount(h)).toBe(1);
    const refused = await h.post('/events', { items: [{ externalId: 'second' }, { externalId: 'third' }] });
    expect(errorMessage(refused, 429)).toMatch(/Request rate exceeded/);
    expect(await eventCount(h)).toBe(1);
    // Throttling comes before validation: a malformed body is refused for its rate, not parsed.
    expect((await h.post('/events', { items: 'not a list' })).status).toBe(429);
    clock.advance(1000);
    expect((await h.post('/events', { items: [{ externalId: 'second' }] })).status).toBe(201);
    expect(await eventCount(h)).toBe(2);
  });

  it('takes per-project overrides from STRATA_PROJECT_LIMITS over those stored with the project', async () => {
    const clock = manualClock();
    const db = await openTestStore();
    await ensureProjects(db, ['dev', 'other', 'third'], 0);
    const limited = JSON.stringify({ limits: { project: { rate: 1, burst: 1 } } });
    await db.run(sql`UPDATE projects SET config = ${limited} WHERE name IN ('other', 'third')`);
    const h = await start({
      env: { STRATA_PROJECTS: 'dev,other,third', STRATA_PROJECT_LIMITS: JSON.stringify({ third: { project: { burst: 2 } } }) },
      build: { now: clock.now, store: db },
    });
    try {
      const burstOf = async (project: string) => {
        let n = 0;
        while ((await h.get(`/api/v1/projects/${project}/events`)).status === 200 && n < 10) n++;
        return n;
      };
      expect(await burstOf('dev')).toBe(10);
      expect(await burstOf('other')).toBe(1);
      expect(await burstOf('third')).toBe(2);
    } finally {
      await h.close();
      open.splice(open.indexOf(h), 1);
      await db.close();
    }
  });
});

describe('concurrency', () => {
  it('answers 429 naming the number of concurrent requests allowed, and frees the slot when a request ends', async () => {
    const holds = new Holds();
    const h = await start({ env: { STRATA_CONCURRENCY_LIMIT: '2' }, build: { extraRoutes: [holds.route('/test/hold')] } });
    const first = h.get('/test/hold');
    const second = h.get('/test/hold');
    await holds.entered(2);
    const refused = await h.get('/events');
    expect(errorMessage(refused, 429)).toBe(
      'Too many concurrent requests for project "dev": at most 2 concurrent requests are allowed; retry after 1 s',
    );
    expect(refused.headers['retry-after']).toBe('1');
    expect((await h.post('/events', { items: [{ externalId: 'held-out' }] })).status).toBe(429);
    expect(await eventCount(h)).toBe(0);

    // Either held request may be the one released: whichever reached the handler first.
    holds.releaseOne();
    expect((await Promise.race([first, second])).status).toBe(200);
    expect((await h.get('/events')).status).toBe(200);
    const third = h.get('/test/hold');
    await holds.entered(3);
    expect((await h.get('/events')).status).toBe(429);
    holds.releaseAll();
    for (const held of await Promise.all([first, second, third])) expect(held.status).toBe(200);
    expect((await h.get('/events')).status).toBe(200);
  });

  it('budgets concurrency per principal as well', async () => {
    const holds = new Holds();
    const h = await start({ env: { STRATA_PRINCIPAL_CONCURRENCY_LIMIT: '1' }, build: { extraRoutes: [holds.route('/test/hold')] } });
    const held = h.get('/test/hold');
    await holds.entered(1);
    expect(errorMessage(await h.get('/events'), 429)).toBe(
      'Too many concurrent requests for principal "strata-admin" in project "dev": at most 1 concurrent request is allowed; retry after 1 s',
    );
    // The principal's budget is per project.
    expect((await h.get('/api/v1/projects/other/events')).status).toBe(200);
    holds.releaseAll();
    expect((await held).status).toBe(200);
  });

  it('keeps each principal\'s budget apart within a project', async () => {
    const holds = new Holds();
    const h = await start({
      env: { STRATA_PRINCIPAL_CONCURRENCY_LIMIT: '1', STRATA_CLIENTS: JSON.stringify([{ clientId: 'second', clientSecret: 'second-secret', groups: ['readers'] }]) },
      build: { extraRoutes: [holds.route('/test/hold')] },
    });
    await createGroup(h, { name: 'Readers', sourceId: 'readers', capabilities: [capability('eventsAcl', ['READ'])] });
    const second = bearer(await clientToken(h, 'second', 'second-secret'));
    const held = h.get('/test/hold');
    await holds.entered(1);
    // The administrator's one slot is taken; the second principal's is not.
    expect((await h.request('GET', '/events', undefined, second)).status).toBe(200);
    expect(errorMessage(await h.get('/events'), 429)).toMatch(/principal "strata-admin" in project "dev": at most 1 concurrent request/);
    const secondHeld = h.request('GET', '/test/hold', undefined, second);
    await holds.entered(2);
    expect(errorMessage(await h.request('GET', '/events', undefined, second), 429)).toMatch(/principal "second" in project "dev"/);
    holds.releaseAll();
    for (const r of [await held, await secondHeld]) expect(r.status).toBe(200);
    expect((await h.get('/events')).status).toBe(200);
    expect((await h.request('GET', '/events', undefined, second)).status).toBe(200);
  });

  it('frees the slot of a request whose handler fails', async () => {
    const failing = route({
      method: 'GET',
      path: '/test/fail',
      capability: { acl: 'eventsAcl', action: 'READ' },
      handler: () => {
        throw new Error('boom');
      },
    });
    const h = await start({ env: { STRATA_CONCURRENCY_LIMIT: '1' }, build: { extraRoutes: [failing] } });
    for (let i = 0; i < 3; i++) expect((await h.get('/test/fail')).status).toBe(500);
    expect((await h.get('/events')).status).toBe(200);
    // Refused requests (400 in validation, 400 unknown id) give their slot back too.
    expect((await h.post('/events', { items: 'x' })).status).toBe(400);
    expect((await h.get('/events/123456')).status).toBe(400);
    expect((await h.get('/events')).status).toBe(200);
  });

  it('frees the slot of a request whose client went away before the answer', async () => {
    const holds = new Holds();
    const h = await start({ env: { STRATA_CONCURRENCY_LIMIT: '1' }, build: { extraRoutes: [holds.route('/test/hold')] } });
    await h.strata.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = h.strata.app.server.address() as { port: number };
    const serverSockets: Socket[] = [];
    h.strata.app.server.on('connection', (s: Socket) => serverSockets.push(s));

    const client = httpRequest({ host: '127.0.0.1', port, path: `${h.base}/test/hold`, headers: { authorization: `Bearer ${h.token}` } });
    client.on('error', () => {});
    client.end();
    await holds.entered(1);
    expect((await h.get('/events')).status).toBe(429);
    const closed = once(serverSockets[0], 'close');
    client.destroy();
    await closed;
    expect((await h.get('/events')).status).toBe(200);
    holds.releaseAll();
  });

  it('gives the slot back before a client that got its answer can send the next request on the connection', async () => {
    const h = await start({ env: { STRATA_CONCURRENCY_LIMIT: '1' } });
    await h.post('/events', { items: Array.from({ length: 1000 }, (_, i) => ({ externalId: `seq-${i}`, description: 'x'.repeat(200) })) });
    await h.strata.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = h.strata.app.server.address() as { port: number };
    const origin = `http://127.0.0.1:${port}${h.base}`;
    const headers = { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' };
    const statuses = new Map<number, number>();
    // One connection (fetch keeps it alive), each request sent once the previous answer is read: small
    // answers and pages of about 250 KB, whose write may finish after the client has the bytes.
    for (let i = 0; i < 60; i++) {
      const res =
        i % 2 === 0
          ? await fetch(`${origin}/events/byids`, { method: 'POST', headers, body: JSON.stringify({ items: [{ externalId: `seq-${i}` }] }) })
          : await fetch(`${origin}/events/list`, { method: 'POST', headers, body: JSON.stringify({ limit: 1000 }) });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: 60 });
  });

  it('enforces the maxima an operation declares, with the same 429', async () => {
    const holds = new Holds();
    const h = await start({
      build: {
        extraRoutes: [
          holds.route('/test/writeback', { concurrency: { perProject: 1 } }),
          holds.route('/test/functions/:fn/call', { concurrency: { perParam: { param: 'fn', max: 2 } } }),
        ],
      },
    });
    const a = h.get('/test/writeback');
    await holds.entered(1);
    expect(errorMessage(await h.get('/test/writeback'), 429)).toBe(
      'Too many concurrent requests for GET /test/writeback for project "dev": at most 1 concurrent request is allowed; retry after 1 s',
    );
    // Other operations and other projects are not held back by it.
    expect((await h.get('/events')).status).toBe(200);
    const b = h.get('/api/v1/projects/other/test/writeback');
    await holds.entered(2);

    const c1 = h.get('/test/functions/7/call');
    const c2 = h.get('/test/functions/7/call');
    await holds.entered(4);
    const refused = await h.get('/test/functions/7/call');
    expect(errorMessage(refused, 429)).toBe(
      'Too many concurrent requests for GET /test/functions/{fn}/call for fn 7 in project "dev": at most 2 concurrent requests are allowed; retry after 1 s',
    );
    expect(refused.headers['retry-after']).toBe('1');
    const other = h.get('/test/functions/8/call');
    await holds.entered(5);
    holds.releaseAll();
    for (const p of [a, b, c1, c2, other]) expect((await p).status).toBe(200);
  });

  it('refuses nonsense operation maxima when the app is built', async () => {
    const bad = new Holds().route('/test/bad', { concurrency: { perProject: 0 } });
    await expect(startCustomHarness({ build: { extraRoutes: [bad] } })).rejects.toThrow(
      'GET /test/bad: limits.concurrency.perProject must be a whole number of at least 1, got 0',
    );
    const noParam = new Holds().route('/test/bad2', { concurrency: { perParam: { param: 'fn', max: 3 } } });
    await expect(startCustomHarness({ build: { extraRoutes: [noParam] } })).rejects.toThrow(/"fn", which is not a path parameter/);
  });
});

describe('configuration', () => {
  it('has defaults a single developer never meets', () => {
    const { throttle } = loadConfig([], {});
    expect(throttle).toEqual({
      enabled: true,
      limits: { project: { rate: 20000, burst: 40000, concurrency: 1000 }, principal: { rate: 10000, burst: 20000, concurrency: 500 } },
      projectLimits: {},
      redisUrl: undefined,
    });
  });

  it('reads flags over environment, and gives a new rate its own burst', () => {
    const { throttle } = loadConfig(['--rate-limit', '50', '--principal-concurrency-limit=3'], { STRATA_RATE_LIMIT: '7', STRATA_PRINCIPAL_RATE_BURST: '9' });
    expect(throttle.limits.project).toEqual({ rate: 50, burst: 100, concurrency: 1000 });
    expect(throttle.limits.principal).toEqual({ rate: 10000, burst: 9, concurrency: 3 });
  });

  it('refuses nonsense limits at start-up, naming the setting', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ STRATA_RATE_LIMIT: '0' }, /STRATA_RATE_LIMIT \(--rate-limit\) must be a number of requests per second above 0.*got "0"/],
      [{ STRATA_RATE_LIMIT: '-5' }, /STRATA_RATE_LIMIT .* got "-5"/],
      [{ STRATA_RATE_LIMIT: 'fast' }, /STRATA_RATE_LIMIT .* got "fast"/],
      [{ STRATA_RATE_LIMIT: '' }, /STRATA_RATE_LIMIT .* got ""/],
      [{ STRATA_RATE_BURST: '0' }, /STRATA_RATE_BURST \(--rate-burst\) must be a whole number of requests from 1/],
      [{ STRATA_RATE_BURST: '0.5' }, /STRATA_RATE_BURST .* got "0.5"/],
      [{ STRATA_CONCURRENCY_LIMIT: '0' }, /STRATA_CONCURRENCY_LIMIT \(--concurrency-limit\) must be a whole number of concurrent requests from 1/],
      [{ STRATA_CONCURRENCY_LIMIT: '2.5' }, /STRATA_CONCURRENCY_LIMIT .* got "2.5"/],
      [{ STRATA_PRINCIPAL_RATE_LIMIT: 'NaN' }, /STRATA_PRINCIPAL_RATE_LIMIT \(--principal-rate-limit\)/],
      [{ STRATA_PRINCIPAL_RATE_BURST: '-1' }, /STRATA_PRINCIPAL_RATE_BURST \(--principal-rate-burst\)/],
      [{ STRATA_PRINCIPAL_CONCURRENCY_LIMIT: '1e3' }, /STRATA_PRINCIPAL_CONCURRENCY_LIMIT \(--principal-concurrency-limit\)/],
      [{ STRATA_THROTTLE: 'maybe' }, /STRATA_THROTTLE \(--throttle\) must be "on" or "off"/],
      [{ STRATA_PROJECT_LIMITS: '{dev:' }, /STRATA_PROJECT_LIMITS \(--project-limits\) is not valid JSON/],
      [{ STRATA_PROJECT_LIMITS: '[]' }, /must be a JSON object keyed by project name/],
      [{ STRATA_PROJECT_LIMITS: '{"dev": {"project": {"rate": 0}}}' }, /STRATA_PROJECT_LIMITS \(--project-limits\): dev\.project\.rate must be a number .* got 0/],
      [{ STRATA_PROJECT_LIMITS: '{"dev": {"project": {"burst": 0.5}}}' }, /STRATA_PROJECT_LIMITS \(--project-limits\): dev\.project\.burst must be a whole number/],
      [{ STRATA_PROJECT_LIMITS: '{"dev": {"principal": {"concurrency": "4"}}}' }, /principal\.concurrency must be a whole number .* got "4"/],
      [{ STRATA_PROJECT_LIMITS: '{"dev": {"project": {"rps": 4}}}' }, /STRATA_PROJECT_LIMITS \(--project-limits\): dev\.project: unknown key "rps"/],
      [{ STRATA_PROJECT_LIMITS: '{"dev": {"everyone": {}}}' }, /unknown key "everyone"; expected "project" or "principal"/],
      [{ STRATA_PROJECT_LIMITS: '{"Dev!": {}}' }, /"Dev!" is not a valid project name/],
      [{ STRATA_REDIS_URL: 'http://localhost:6379' }, /STRATA_REDIS_URL \(--redis-url\) must be a redis:\/\/ or rediss:\/\/ URL/],
    ];
    for (const [env, message] of cases) {
      let error: unknown;
      try {
        loadConfig([], env);
      } catch (err) {
        error = err;
      }
      expect(error, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect((error as Error).message, JSON.stringify(env)).toMatch(message);
    }
  });

  it('refuses to build an app whose stored project limits are nonsense', async () => {
    const db = await openTestStore();
    try {
      await ensureProjects(db, ['dev'], 0);
      await db.run(sql`UPDATE projects SET config = ${JSON.stringify({ limits: { principal: { concurrency: -1 } } })} WHERE name = 'dev'`);
      const config = loadConfig([], { STRATA_DATA_DIR: ':memory:', STRATA_PROJECTS: 'dev' });
      const error = await buildApp(config, { store: db, logger: false }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/project "dev" stored limits \(projects\.config\.limits\)\.principal\.concurrency must be a whole number .* got -1/);
    } finally {
      await db.close();
    }
  });

  it('makes the server refuse to start with a message', () => {
    const run = spawnSync(process.execPath, ['dist/cli.js', 'serve', '--data-dir', ':memory:', '--rate-burst', '0'], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^strata: STRATA_RATE_BURST \(--rate-burst\) must be a whole number of requests from 1 to 1000000000, got "0"/);
  });

  it('can be switched off', async () => {
    const holds = new Holds();
    const h = await start({ env: { STRATA_THROTTLE: 'off', STRATA_CONCURRENCY_LIMIT: '1', STRATA_RATE_LIMIT: '1', STRATA_RATE_BURST: '1' }, build: { extraRoutes: [holds.route('/test/hold')] } });
    const held = h.get('/test/hold');
    await holds.entered(1);
    for (let i = 0; i < 3; i++) expect((await h.get('/events')).status).toBe(200);
    holds.releaseAll();
    expect((await held).status).toBe(200);
  });
});

describe.runIf(hasRedis())('budgets shared through Redis', () => {
  let server: RedisServer;
  let redis: Redis;
  let a: Harness;
  let b: Harness;
  const holdsA = new Holds();

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
    const env = {
      STRATA_REDIS_URL: server.url,
      STRATA_PROJECT_LIMITS: JSON.stringify({ dev: { project: { rate: 0.001, burst: 3 } }, other: { project: { concurrency: 1 } } }),
    };
    // Two app instances, each with its own database and process-local state: only Redis is shared.
    a = await startCustomHarness({ env, build: { extraRoutes: [holdsA.route('/test/hold')] } });
    b = await startCustomHarness({ env });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('shares a project request-rate budget between two instances', async () => {
    expect((await a.get('/events')).status).toBe(200);
    expect((await b.get('/events')).status).toBe(200);
    expect((await a.get('/events')).status).toBe(200);
    const refused = await b.get('/events');
    expect(errorMessage(refused, 429)).toMatch(/^Request rate exceeded for project "dev": at most 0\.001 requests per second are allowed \(bursts of up to 3\); retry after \d+ s$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(990);
    expect((await a.get('/events')).status).toBe(429);
    // A refused write changes nothing on either instance.
    expect((await a.post('/events', { items: [{ externalId: 'shared' }] })).status).toBe(429);
    expect(await eventCount(a)).toBe(0);
  });

  it('shares a project concurrency budget between two instances', async () => {
    const held = a.get('/api/v1/projects/other/test/hold');
    await holdsA.entered(1);
    expect(errorMessage(await b.get('/api/v1/projects/other/events'), 429)).toBe(
      'Too many concurrent requests for project "other": at most 1 concurrent request is allowed; retry after 1 s',
    );
    holdsA.releaseOne();
    expect((await held).status).toBe(200);
    // The slot went back to Redis before the held response was sent.
    expect((await b.get('/api/v1/projects/other/events')).status).toBe(200);
    expect(await redis.zcard('strata:{other}:conc')).toBe(0);
  });

  it('lets the slots of a process that died expire instead of holding them for ever', async () => {
    const [seconds, micros] = await redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await redis.zadd('strata:{other}:conc', now - 1, 'dead-process:1');
    expect((await b.get('/api/v1/projects/other/events')).status).toBe(200);
    await redis.zadd('strata:{other}:conc', now + 60_000, 'live-process:1');
    expect((await b.get('/api/v1/projects/other/events')).status).toBe(429);
    await redis.zrem('strata:{other}:conc', 'live-process:1');
    expect((await b.get('/api/v1/projects/other/events')).status).toBe(200);
  });

  it('refuses to start when Redis cannot be reached', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    await expect(startCustomHarness({ env: { STRATA_REDIS_URL: url } })).rejects.toThrow(`STRATA_REDIS_URL: cannot reach Redis at ${url}`);
  });

  it('keeps serving, unthrottled, when Redis goes away', async () => {
    await server.stop();
    expect((await b.get('/api/v1/projects/other/events')).status).toBe(200);
    expect((await b.get('/api/v1/projects/other/events')).status).toBe(200);
  });
});
