/**
 * The limits of function calls: at most 100 calls of one function running (the next is a 429), the
 * wall-clock timeout, and the setting that turns execution off.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';
import { ManualClock } from '../support/manual-clock.js';
import { callToEnd, canRun, deployed, hasPython, nonce } from './support.js';

describe('running calls of one function', () => {
  let h: Harness;
  const held: ServerResponse[] = [];
  let arrived: () => void;
  const firstArrived = new Promise<void>((resolve) => (arrived = resolve));
  // The handlers wait on this server, which answers only when the test lets it.
  const gate = createServer((_req, res) => {
    held.push(res);
    arrived();
  });

  beforeAll(async () => {
    h = await startHarness({}, { STRATA_FUNCTIONS_CONCURRENCY: '2' });
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await h.close();
    gate.close();
  });

  it.runIf(canRun)('are at most 100: the 101st call is a 429 that says so', async () => {
    const fn = await deployed(h, { 'handler.js': 'exports.handle = async (data) => (await fetch(data.gate)).text();' }, { functionPath: 'handler.js' });
    const data = { gate: `http://127.0.0.1:${(gate.address() as AddressInfo).port}/` };
    for (let i = 0; i < 100; i++) {
      const res = await h.post(`/functions/${fn.id}/call`, { data, nonce: await nonce(h) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    await firstArrived;
    const unused = await nonce(h);
    const refused = await h.post(`/functions/${fn.id}/call`, { data, nonce: unused });
    expect(errorMessage(refused, 429)).toMatch(/already has 100 calls running/);
    expect(refused.headers['retry-after']).toBeDefined();
    // The refused call did not use its nonce up.
    expect((await h.request('POST', '/sessions/token', { nonce: unused }, { authorization: '' })).status).toBe(200);
    const running = await h.post(`/functions/${fn.id}/calls/list`, { filter: { status: 'Running' }, limit: 1000 });
    expect(running.body.items).toHaveLength(100);

    // Deleting the function stops its calls, those waiting on the gate included.
    expect((await h.post('/functions/delete', { items: [{ id: fn.id }] })).status).toBe(200);
    for (const res of held) res.end('released');
    await jobsDone(h);
  });
});

describe('a call past its time', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, { STRATA_FUNCTIONS_TIMEOUT_S: '1' });
  });
  afterAll(() => h.close());

  it.runIf(canRun)('ends as Timeout (JavaScript)', async () => {
    const fn = await deployed(h, { 'handler.js': 'exports.handle = () => { for (;;) {} };' }, { functionPath: 'handler.js' });
    const call = await callToEnd(h, fn.id);
    expect(call.status).toBe('Timeout');
    expect(call.error.message).toMatch(/longer than its 1 seconds/);
  });

  it.runIf(hasPython)('ends as Timeout (Python)', async () => {
    const fn = await deployed(h, { 'handler.py': 'import time\ndef handle(data):\n    time.sleep(3600)\n' });
    const call = await callToEnd(h, fn.id);
    expect(call.status).toBe('Timeout');
  });
});

describe('with execution turned off', () => {
  let h: Harness;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    h = await startHarness({}, { STRATA_FUNCTIONS_EXECUTION: 'off' }, { clock });
  });
  afterAll(() => h.close());

  it('creates functions but refuses calls, saying why', async () => {
    const fn = await deployed(h, { 'handler.py': 'def handle(data):\n    return 1\n' });
    const res = await h.post(`/functions/${fn.id}/call`, { data: {}, nonce: await nonce(h) });
    expect(errorMessage(res, 501)).toMatch(/turned off .*STRATA_FUNCTIONS_EXECUTION=off/);
    expect((await h.get(`/functions/${fn.id}/calls`)).body.items).toEqual([]);
  });

  it("ends a schedule's calls as Failed, saying why", async () => {
    const fn = await deployed(h, { 'handler.py': 'def handle(data):\n    return 1\n' });
    const created = await h.post('/functions/schedules', { items: [{ name: 's', cronExpression: '* * * * *', functionId: fn.id, nonce: await nonce(h) }] });
    expect(created.status).toBe(201);
    clock.advance(60_000);
    await h.strata.services.jobs!.settled();
    await jobsDone(h);
    const calls = (await h.get(`/functions/${fn.id}/calls`)).body.items;
    expect(calls).toMatchObject([{ status: 'Failed', scheduleId: created.body.items[0].id, error: { message: expect.stringMatching(/turned off/) } }]);
  });
});
