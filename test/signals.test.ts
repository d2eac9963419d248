/**
 * The signals API over HTTP, on both backends: its channel on both sides of 20260505, sinks, subscriptions
 * and their filters, and signals of ended workflow executions pushed to the sinks that subscribed, listed
 * and sent to an e-mail relay through the outbound client. The clock is moved by hand: the scan that pushes
 * signals fires every 5 seconds of it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { manualClock, startCustomHarness } from './support/custom-harness.js';
import { errorMessage, type Harness } from './support/harness.js';
import type { ManualClock } from './support/manual-clock.js';
import { dueJobsDone, nonce, ok } from './support/workflows.js';

let h: Harness;
let clock: ManualClock;
let relay: Server;
const mails: Array<Record<string, any>> = [];
let refuseMail = false;

const BETA = { 'svc-version': '20260505-beta' };
const at = (version: string) => ({ 'svc-version': version });
const post = (path: string, body: unknown, headers: Record<string, string> = BETA) => h.request('POST', `/processes/signals${path}`, body, headers);
const get = (path: string, headers: Record<string, string> = BETA) => h.request('GET', `/processes/signals${path}`, undefined, headers);

beforeAll(async () => {
  relay = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      if (refuseMail) {
        res.writeHead(503).end();
        return;
      }
      mails.push(JSON.parse(text));
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((ready) => relay.listen(0, '127.0.0.1', ready));
  clock = manualClock();
  h = await startCustomHarness({
    env: { STRATA_CLIENTS: namedClients('sig-reader'), STRATA_SIGNALS_EMAIL_URL: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/send`, STRATA_OUTBOUND_ALLOW: 'loopback' },
    build: { now: clock.now, clock },
  });
});
afterAll(async () => {
  await h.close();
  await new Promise((done) => relay.close(done));
});

describe('the channel', () => {
  it('is beta from 20260505: a -beta or -alpha version calls it, a stable one does not', async () => {
    for (const v of ['20260505-beta', '20261127-beta', '20260505-alpha', 'beta']) expect((await get('/sinks', at(v))).status, v).toBe(200);
    for (const v of ['20260505', '20261127']) expect(errorMessage(await get('/sinks', at(v)), 400), v).toMatch(/is a beta operation/);
    expect(errorMessage(await h.request('GET', '/processes/signals/sinks'), 400)).toMatch(/is a beta operation/);
  });

  it('is alpha before 20260505: only a -alpha version calls it', async () => {
    expect((await get('/sinks', at('20260504-alpha'))).status).toBe(200);
    expect((await get('/sinks', at('20230101-alpha'))).status).toBe(200);
    expect(errorMessage(await get('/sinks', at('20260504-beta')), 400)).toMatch(/is an alpha operation at version 20260325 \(the signals API is beta from 20260505\)/);
    expect(errorMessage(await post('/list', { sink: { type: 'current_user' } }, at('20250101-beta')), 400)).toMatch(/alpha operation/);
  });
});

describe('capabilities', () => {
  it('subscribeSignalsAcl:READ reads and lists, WRITE creates, updates and deletes', async () => {
    const reader = { ...BETA, ...bearer(await namedClientToken(h, 'sig-reader', [capability('subscribeSignalsAcl', ['READ'])])) };
    expect((await get('/sinks', reader)).status).toBe(200);
    expect((await post('/subscriptions/list', {}, reader)).status).toBe(200);
    expect(errorMessage(await post('/sinks', { items: [{ type: 'user', externalId: 'r' }] }, reader), 403)).toMatch(/subscribeSignalsAcl:WRITE/);
    expect((await post('/subscriptions/delete', { items: [{ externalId: 'x' }] }, reader)).status).toBe(403);
    expect((await h.request('GET', '/processes/signals/sinks', undefined, BETA)).status).toBe(200);
  });
});

describe('sinks', () => {
  it('are created, listed, read, updated and deleted, by type and external id', async () => {
    const created = ok(await post('/sinks', { items: [{ type: 'email', externalId: 'ops', emailAddress: 'ops@example.com' }, { type: 'user', externalId: 'u-1' }] }));
    expect(created.items).toEqual([
      { type: 'email', externalId: 'ops', emailAddress: 'ops@example.com', createdTime: expect.any(Number), lastUpdatedTime: expect.any(Number) },
      { type: 'user', externalId: 'u-1', createdTime: expect.any(Number), lastUpdatedTime: expect.any(Number) },
    ]);
    // The same external id under the other type is another sink; the same type and external id again is a 409.
    ok(await post('/sinks', { items: [{ type: 'user', externalId: 'ops' }] }));
    const dup = await post('/sinks', { items: [{ type: 'email', externalId: 'ops', emailAddress: 'x@example.com' }] });
    expect(errorMessage(dup, 409)).toBeTruthy();
    expect(dup.body.error.duplicated).toEqual([{ type: 'email', externalId: 'ops' }]);

    const page = ok(await get('/sinks?limit=2'));
    expect(page.items).toHaveLength(2);
    const rest = ok(await get(`/sinks?cursor=${encodeURIComponent(page.nextCursor)}`));
    expect([...page.items, ...rest.items].map((s: { type: string; externalId: string }) => `${s.type}:${s.externalId}`).sort()).toEqual(['email:ops', 'user:ops', 'user:u-1']);

    const read = ok(await post('/sinks/byids', { items: [{ type: 'user', externalId: 'u-1' }, { type: 'email', externalId: 'ops' }] }));
    expect(read.items.map((s: { type: string }) => s.type)).toEqual(['user', 'email']);
    const missing = await post('/sinks/byids', { items: [{ type: 'email', externalId: 'u-1' }] });
    expect(errorMessage(missing, 400)).toBeTruthy();
    expect(missing.body.error.missing).toEqual([{ type: 'email', externalId: 'u-1' }]);
    expect(ok(await post('/sinks/byids', { items: [{ type: 'current_user' }], ignoreUnknownIds: true })).items).toEqual([]);

    const updated = ok(await post('/sinks/update', { items: [{ type: 'email', externalId: 'ops', update: { emailAddress: { set: 'oncall@example.com' } } }] }));
    expect(updated.items[0].emailAddress).toBe('oncall@example.com');
    expect(errorMessage(await post('/sinks/update', { items: [{ type: 'user', externalId: 'u-1', update: { emailAddress: { set: 'a@b.c' } } }] }), 400)).toMatch(/^items\[0\]/);
    expect(errorMessage(await post('/sinks', { items: [{ type: 'email', externalId: 'no-address' }] }), 400)).toMatch(/^items\[0\]/);

    expect(errorMessage(await post('/sinks/delete', { items: [{ type: 'user', externalId: 'ops' }, { type: 'user', externalId: 'nope' }] }), 400)).toBeTruthy();
    expect(ok(await post('/sinks/delete', { items: [{ type: 'user', externalId: 'ops' }, { type: 'user', externalId: 'nope' }], ignoreUnknownIds: true }))).toEqual({});
    expect(ok(await post('/sinks/byids', { items: [{ type: 'user', externalId: 'ops' }], ignoreUnknownIds: true })).items).toEqual([]);
  });

  it('the caller has its own user sink, named current_user', async () => {
    const me = (await h.request('GET', '/api/v1/token/inspect')).body.subject as string;
    ok(await post('/sinks', { items: [{ type: 'user', externalId: me }] }));
    expect(ok(await post('/sinks/byids', { items: [{ type: 'current_user' }] })).items[0].externalId).toBe(me);
    ok(await post('/sinks/update', { items: [{ type: 'current_user', update: {} }] }));
  });
});

describe('subscriptions', () => {
  it('tie an existing sink to a topic, and are listed by what they would receive', async () => {
    const created = ok(
      await post('/subscriptions', {
        items: [
          { externalId: 'all-wf', sink: { type: 'email', externalId: 'ops' }, filter: { topic: 'cognite_workflows' } },
          { externalId: 'wf-errors', sink: { type: 'user', externalId: 'u-1' }, filter: { topic: 'cognite_workflows', resource: 'sig-wf', severity: 'error' } },
          { externalId: 'integrations', sink: { type: 'user', externalId: 'u-1' }, filter: { topic: 'cognite_integrations', category: ['run_failed'], extractorVersion: '1.0' } },
        ],
      }),
    );
    expect(created.items[1]).toEqual({
      externalId: 'wf-errors',
      sink: { type: 'user', externalId: 'u-1' },
      filter: { topic: 'cognite_workflows', resource: 'sig-wf', severity: 'error' },
      createdTime: expect.any(Number),
      lastUpdatedTime: expect.any(Number),
    });
    const ids = async (filter: unknown) => ok(await post('/subscriptions/list', { filter })).items.map((s: { externalId: string }) => s.externalId);
    expect(await ids({ topic: 'cognite_workflows' })).toEqual(['all-wf', 'wf-errors']);
    expect(await ids({ topic: 'cognite_workflows', resource: 'other' })).toEqual(['all-wf']);
    expect(await ids({ topic: 'cognite_workflows', resource: { isNull: false } })).toEqual(['wf-errors']);
    expect(await ids({ topic: 'cognite_workflows', severity: 'warning' })).toEqual(['all-wf']);
    expect(await ids({ topic: 'cognite_workflows', sink: { type: 'user', externalId: 'u-1' } })).toEqual(['wf-errors']);
    expect(await ids({ topic: 'cognite_integrations', category: 'run_failed', metadata: { extractorVersion: '1.0' } })).toEqual(['integrations']);
    expect(await ids({ topic: 'cognite_integrations', category: 'other' })).toEqual([]);
    const first = ok(await post('/subscriptions/list', { limit: 2 }));
    expect(first.items).toHaveLength(2);
    expect(ok(await post('/subscriptions/list', { limit: 2, cursor: first.nextCursor })).items.map((s: { externalId: string }) => s.externalId)).toEqual(['integrations']);
    expect(errorMessage(await post('/subscriptions/list', { cursor: 'nonsense' }), 400)).toMatch(/^cursor/);
  });

  it('refuse a sink that does not exist, a filter that changes topic, and bad filters, changing nothing', async () => {
    expect(
      errorMessage(await post('/subscriptions', { items: [{ externalId: 'x', sink: { type: 'email', externalId: 'none' }, filter: { topic: 'cognite_workflows' } }] }), 400),
    ).toMatch(/items\[0\]\.sink: there is no email sink with externalId "none"/);
    expect(errorMessage(await post('/subscriptions', { items: [{ externalId: 'x', sink: { type: 'email', externalId: 'ops' }, filter: { topic: 'nope' } }] }), 400)).toMatch(/filter/);
    expect(
      errorMessage(await post('/subscriptions', { items: [{ externalId: 'x', sink: { type: 'email', externalId: 'ops' }, filter: { topic: 'cognite_workflows', extractorVersion: '1' } }] }), 400),
    ).toMatch(/filter/);
    expect(
      errorMessage(await post('/subscriptions/update', { items: [{ externalId: 'all-wf', update: { filter: { set: { topic: 'cognite_integrations' } } } }] }), 400),
    ).toMatch(/topic is cognite_workflows; a filter cannot change it/);
    const updated = ok(await post('/subscriptions/update', { items: [{ externalId: 'all-wf', update: { filter: { set: { topic: 'cognite_workflows', severity: 'info' } } } }] }));
    expect(updated.items[0].filter).toEqual({ topic: 'cognite_workflows', severity: 'info' });
    expect(ok(await post('/subscriptions/list', {})).items.map((s: { externalId: string }) => s.externalId)).toEqual(['all-wf', 'wf-errors', 'integrations']);
    const tooMany = Array.from({ length: 11 }, (_, i) => ({ externalId: `s${i}`, sink: { type: 'email', externalId: 'ops' }, filter: { topic: 'cognite_workflows' } }));
    expect(errorMessage(await post('/subscriptions', { items: tooMany }), 400)).toMatch(/items/);
  });
});

describe('signals', () => {
  async function runWorkflow(externalId: string, tasks: unknown[]): Promise<void> {
    ok(await h.post('/workflows', { items: [{ externalId }] }));
    ok(await h.post('/workflows/versions', { items: [{ workflowExternalId: externalId, version: '1', workflowDefinition: { tasks } }] }));
    ok(await h.post(`/workflows/${externalId}/versions/1/run`, { authentication: { nonce: await nonce(h) } }), 202);
    await dueJobsDone(h);
  }

  async function scanned(): Promise<void> {
    clock.advance(5000);
    await dueJobsDone(h);
  }

  const signalsOf = async (sink: unknown, extra: Record<string, unknown> = {}) => ok(await post('/list', { sink, ...extra }));

  it('of ended workflow executions are pushed to the sinks whose subscriptions match, and e-mailed', async () => {
    await runWorkflow('sig-wf', [{ externalId: 'a', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } }]);
    await runWorkflow('sig-bad', [{ externalId: 'a', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/nowhere', method: 'GET' } }, retries: 0 }]);
    await scanned();

    const ops = await signalsOf({ type: 'email', externalId: 'ops' });
    expect(ops.items.map((s: { resourceId: string; category: string }) => `${s.resourceId}:${s.category}`).sort()).toEqual(['sig-bad:execution_failed', 'sig-wf:execution_completed']);
    const completed = ops.items.find((s: { resourceId: string }) => s.resourceId === 'sig-wf');
    expect(completed).toEqual({
      topic: 'cognite_workflows',
      sink: { type: 'email', externalId: 'ops' },
      externalId: expect.any(String),
      severity: 'info',
      resourceId: 'sig-wf',
      category: 'execution_completed',
      metadata: {},
      message: expect.stringMatching(/^Execution .* of workflow sig-wf version 1 completed$/),
      createdTime: expect.any(Number),
    });
    // wf-errors takes errors of sig-wf only: that one completed.
    expect((await signalsOf({ type: 'user', externalId: 'u-1' })).items).toEqual([]);
    expect((await signalsOf({ type: 'email', externalId: 'ops' }, { topic: 'cognite_integrations' })).items).toEqual([]);
    expect(mails.map((m) => m.to)).toEqual(['oncall@example.com', 'oncall@example.com']);
    expect(mails.map((m) => m.signal.resourceId).sort()).toEqual(['sig-bad', 'sig-wf']);

    // A later look pushes nothing twice.
    await scanned();
    expect((await signalsOf({ type: 'email', externalId: 'ops' })).items).toHaveLength(2);
    expect(mails).toHaveLength(2);
  });

  it('a signal the relay refused is sent at a later look', async () => {
    refuseMail = true;
    await runWorkflow('sig-wf-2', [{ externalId: 'a', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } }]);
    await scanned();
    expect((await signalsOf({ type: 'email', externalId: 'ops' })).items).toHaveLength(3);
    expect(mails).toHaveLength(2);
    refuseMail = false;
    await scanned();
    expect(mails).toHaveLength(3);
    expect(mails[2].signal.resourceId).toBe('sig-wf-2');
  });

  it('are listed a page at a time, and not for a sink that does not exist', async () => {
    const first = await signalsOf({ type: 'email', externalId: 'ops' }, { limit: 2 });
    expect(first.items).toHaveLength(2);
    const next = await signalsOf({ type: 'email', externalId: 'ops' }, { limit: 2, cursor: first.nextCursor });
    expect(next.items).toHaveLength(1);
    expect(next.nextCursor).toBeUndefined();
    expect(errorMessage(await post('/list', { sink: { type: 'email', externalId: 'none' } }), 400)).toMatch(/^sink: there is no email sink/);
    expect(errorMessage(await post('/list', { sink: { type: 'email', externalId: 'ops' }, limit: 101 }), 400)).toMatch(/limit/);
  });

  it('go with their sink, as do its subscriptions', async () => {
    ok(await post('/sinks/delete', { items: [{ type: 'email', externalId: 'ops' }] }));
    expect(ok(await post('/subscriptions/list', {})).items.map((s: { externalId: string }) => s.externalId)).toEqual(['wf-errors', 'integrations']);
    ok(await post('/sinks', { items: [{ type: 'email', externalId: 'ops', emailAddress: 'ops@example.com' }] }));
    expect((await signalsOf({ type: 'email', externalId: 'ops' })).items).toEqual([]);
  });

  it('are of what ends while the project has subscriptions', async () => {
    ok(await post('/subscriptions/delete', { items: [{ externalId: 'wf-errors' }, { externalId: 'integrations' }, { externalId: 'all-wf' }], ignoreUnknownIds: true }));
    await runWorkflow('sig-unwatched', [{ externalId: 'a', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } }]);
    await scanned();
    ok(await post('/subscriptions', { items: [{ externalId: 'again', sink: { type: 'email', externalId: 'ops' }, filter: { topic: 'cognite_workflows' } }] }));
    await scanned();
    expect((await signalsOf({ type: 'email', externalId: 'ops' })).items).toEqual([]);
    await runWorkflow('sig-watched', [{ externalId: 'a', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } }]);
    await scanned();
    expect((await signalsOf({ type: 'email', externalId: 'ops' })).items.map((s: { resourceId: string }) => s.resourceId)).toEqual(['sig-watched']);
  });
});
