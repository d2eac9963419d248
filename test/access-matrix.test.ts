/**
 * The access matrix, from the routes themselves: every operation the app serves (including ones added
 * after this test was written) refuses a caller without a token (401), refuses a principal that holds every
 * capability except the route's own (403 naming it), and lets a principal holding only that capability
 * through (neither 401 nor 403); a route that needs further capabilities (`alsoNeeds`) refuses a principal
 * without one of them, naming it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aclKey, actionKey } from '../src/auth/acls.js';
import { formatCapability, type Capability } from '../src/auth/principal.js';
import type { ApiRoute } from '../src/http/route.js';
import { bearer, builtInSigner, createGroup } from './support/auth.js';
import { startHarness, type Harness } from './support/harness.js';

let h: Harness;
let dir: string;
const only = new Map<string, string>();
const allBut = new Map<string, string>();
/** Tokens holding a route's capability and what it also needs, by the route's key. */
const withAlso = new Map<string, string>();
let withoutGroups: string;

const keyOf = (c: Capability) => `${aclKey(c.acl)}:${actionKey(c.action)}`;
const grant = (c: Capability) => ({ [c.acl]: { actions: [c.action], scope: { all: {} } } });

type GuardedRoute = ApiRoute & { capability: Capability };
const guarded = (routes: readonly ApiRoute[]) => routes.filter((r): r is GuardedRoute => r.capability !== null);

function distinct(routes: readonly GuardedRoute[]): Capability[] {
  const byKey = new Map<string, Capability>();
  for (const r of routes) byKey.set(keyOf(r.capability), r.capability);
  return [...byKey.values()];
}

function request(route: ApiRoute, authorization: Record<string, string>) {
  const path = route.path.replace(/:(\w+)/g, '1');
  const body = route.method === 'POST' || route.method === 'PUT' ? {} : undefined;
  return h.request(route.method, `/api/v1/projects/dev${path}`, body, authorization);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-matrix-'));
  h = await startHarness({ dataDir: dir });
  const signer = await builtInSigner(h);
  const capabilities = distinct(guarded(h.strata.routes));
  for (const c of capabilities) {
    const key = keyOf(c);
    await createGroup(h, { name: `only ${key}`, members: [`only ${key}`], capabilities: [grant(c)] });
    // Leaving out the capability also leaves out those that include it (WRITE includes WRITE_PROPERTIES).
    const others = capabilities.filter((o) => keyOf(o) !== key && !(c.impliedBy ?? []).some((a) => keyOf({ acl: c.acl, action: a }) === keyOf(o)));
    await createGroup(h, { name: `all but ${key}`, members: [`all but ${key}`], capabilities: others.map(grant) });
    only.set(key, await signer.sign({ sub: `only ${key}` }));
    allBut.set(key, await signer.sign({ sub: `all but ${key}` }));
  }
  withoutGroups = await signer.sign({ sub: 'in no group' });
  for (const route of guarded(h.strata.routes)) {
    if (!route.alsoNeeds?.length) continue;
    const needed = [route.capability, ...route.alsoNeeds];
    const key = needed.map(keyOf).join(' ');
    if (withAlso.has(key)) continue;
    await createGroup(h, { name: `with ${key}`, members: [`with ${key}`], capabilities: needed.map(grant) });
    withAlso.set(key, await signer.sign({ sub: `with ${key}` }));
  }
});

const tokenFor = (route: GuardedRoute) =>
  route.alsoNeeds?.length ? withAlso.get([route.capability, ...route.alsoNeeds].map(keyOf).join(' '))! : only.get(keyOf(route.capability))!;
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('access matrix', () => {
  it('covers every declared route', () => {
    expect(h.strata.routes.length).toBeGreaterThan(20);
  });

  it('refuses every route without a token', async () => {
    for (const route of h.strata.routes) {
      const res = await request(route, { authorization: '' });
      expect(res.status, `${route.method} ${route.path}`).toBe(401);
    }
  });

  it("refuses every route to a principal holding every capability but the route's own, naming it", async () => {
    for (const route of guarded(h.strata.routes)) {
      const res = await request(route, bearer(allBut.get(keyOf(route.capability))!));
      const where = `${route.method} ${route.path}`;
      expect(res.status, where).toBe(403);
      expect(res.body.error.message, where).toContain(`Missing capability ${formatCapability(route.capability)}`);
    }
  });

  it("lets a principal holding only the route's capability (and those it also needs) through", async () => {
    for (const route of guarded(h.strata.routes)) {
      const res = await request(route, bearer(tokenFor(route)));
      expect([401, 403], `${route.method} ${route.path}: ${JSON.stringify(res.body)}`).not.toContain(res.status);
    }
  });

  it('refuses a route that needs further capabilities to a principal holding only its own, naming the one missing', async () => {
    const needing = guarded(h.strata.routes).filter((r) => r.alsoNeeds?.length);
    expect(needing.length).toBeGreaterThan(0);
    for (const route of needing) {
      const res = await request(route, bearer(only.get(keyOf(route.capability))!));
      expect(res.status, `${route.method} ${route.path}`).toBe(403);
      expect(res.body.error.message).toContain(`Missing capability ${formatCapability(route.alsoNeeds![0])}`);
    }
  });

  it('lets a principal of the project without any capability call the operations that declare none (the units catalog, the request log, the removed seismic API)', async () => {
    const open = h.strata.routes.filter((r) => r.capability === null);
    expect(open.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'GET /console/requests',
      'GET /seismic/seismics/segy/:seismicId',
      'GET /units',
      'GET /units/:externalId',
      'GET /units/systems',
      'POST /seismic/batchdownload',
      'POST /units/byids',
    ]);
    for (const route of open) {
      const res = await request(route, bearer(withoutGroups));
      expect([401, 403], `${route.method} ${route.path}: ${JSON.stringify(res.body)}`).not.toContain(res.status);
    }
    const guardedOne = await h.request('POST', '/api/v1/projects/dev/timeseries/list', {}, bearer(withoutGroups));
    expect(guardedOne.status).toBe(403);
  });
});
