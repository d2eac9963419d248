/**
 * Calls of the API on a user's behalf (src/http/self-calls.ts): with a session handed over as its nonce, the
 * call reaches what the session's principal reaches and no more, the nonce is used up, and a revoked session
 * calls nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { createSelfCaller } from '../src/http/self-calls.js';
import { startHarness, type Harness } from './support/harness.js';

const CLIENTS = [{ clientId: 'reader', clientSecret: 'reader-secret', groups: ['readers'] }];
let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  await createGroup(h, { name: 'Readers', sourceId: 'readers', capabilities: [capability('eventsAcl', ['READ']), capability('sessionsAcl', ['CREATE'])] });
  expect((await h.post('/events', { items: [{ externalId: 'e1' }] })).status).toBe(201);
});
afterAll(() => h.close());

it('calls as the session it was handed, with its rights only', async () => {
  const reader = await clientToken(h, 'reader', 'reader-secret');
  const created = await h.request('POST', '/sessions', { items: [{ tokenExchange: true }] }, bearer(reader));
  const api = h.strata.services.api!;
  const grant = await api.bind('dev', created.body.items[0].nonce);
  await expect(api.bind('dev', created.body.items[0].nonce)).rejects.toThrow(/already used/);

  const read = await api.call({ project: 'dev', credential: grant, method: 'POST', path: '/events/list', body: { limit: 10 } });
  expect(read.status).toBe(200);
  expect((read.body as { items: { externalId: string }[] }).items.map((e) => e.externalId)).toEqual(['e1']);
  const write = await api.call({ project: 'dev', credential: grant, method: 'POST', path: '/events', body: { items: [{ externalId: 'e2' }] } });
  expect(write.status).toBe(403);
  const other = await api.call({ project: 'other', credential: grant, method: 'GET', path: '/events' });
  expect(other.status).toBe(401);

  expect((await h.post('/sessions/revoke', { items: [{ id: grant.sessionId }] })).status).toBe(200);
  const afterRevoke = await api.call({ project: 'dev', credential: grant, method: 'GET', path: '/events' });
  expect(afterRevoke.status).toBe(401);
});

it('calls with a token as given', async () => {
  const res = await h.strata.services.api!.call({ project: 'dev', credential: { token: h.token }, method: 'GET', path: '/events?limit=1' });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ items: [expect.objectContaining({ externalId: 'e1' })] });
});

it('waits for the server to be built before calling it', async () => {
  let built!: (app: typeof h.strata.app) => void;
  const api = createSelfCaller({ app: new Promise((resolve) => (built = resolve)), auth: h.strata.auth, db: h.strata.store, now: Date.now });
  let answered = false;
  const call = api.call({ project: 'dev', credential: { token: h.token }, method: 'GET', path: '/events?limit=1' }).then((res) => ((answered = true), res));
  await new Promise((resolve) => setImmediate(resolve));
  expect(answered).toBe(false);
  built(h.strata.app);
  expect((await call).status).toBe(200);
});
