/**
 * Functions over HTTP: created from a zip file, deployed, called for real in a child process (Python and
 * JavaScript), with their response and logs; the bad input they refuse; schedules firing with the manual
 * clock; who may call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from '../support/auth.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';
import { ManualClock } from '../support/manual-clock.js';
import { callToEnd, canRun, deployed, hasPython, nonce, uploadFile, zipOf } from './support.js';

const clock = new ManualClock(Date.now());
let h: Harness;

const JS_ECHO = { 'handler.js': "exports.handle = async (data, context) => { console.log('hello from js'); return { twice: data.n * 2, info: context.functionCallInfo }; };" };
const PY_ECHO = {
  'src/handler.py': 'import os\nfrom helpers import add\ndef handle(data, function_call_info):\n    print("hello from python")\n    return {"sum": add(data["a"], data["b"]), "info": function_call_info, "home": os.environ["HOME"], "env": sorted(os.environ)}\n',
  'helpers.py': 'def add(a, b):\n    return a + b\n',
};

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('runner', 'reader', 'writer') }, { clock });
});
afterAll(() => h.close());

describe('functions', () => {
  it('creates a function from a zip file, deploys it and lists it', async () => {
    const fn = await deployed(h, JS_ECHO, { externalId: 'echo-js', functionPath: 'handler.js', metadata: { team: 'a' }, secrets: { key: 'value' } });
    expect(fn).toMatchObject({ externalId: 'echo-js', functionPath: 'handler.js', functionType: 'classic', status: 'Ready', secrets: { key: '***' } });
    expect(fn).not.toHaveProperty('codeKey');
    expect(fn).not.toHaveProperty('secretValues');
    const listed = await h.post('/functions/list', { filter: { externalIdPrefix: 'echo', metadata: { team: 'a' } } });
    expect(listed.body.items.map((f: { id: number }) => f.id)).toEqual([fn.id]);
    const byIds = await h.post('/functions/byids', { items: [{ externalId: 'echo-js' }] });
    expect(byIds.body.items[0].id).toBe(fn.id);
    expect((await h.get('/functions')).body.items.length).toBeGreaterThan(0);
  });

  it.runIf(canRun)('runs a JavaScript handler and keeps its response and logs', async () => {
    const fn = await deployed(h, JS_ECHO, { functionPath: 'handler.js' });
    const call = await callToEnd(h, fn.id, { n: 21 });
    expect(call).toMatchObject({ status: 'Completed', functionId: fn.id });
    expect(call.endTime).toBeGreaterThanOrEqual(call.startTime);
    const response = await h.get(`/functions/${fn.id}/calls/${call.id}/response`);
    expect(response.body).toEqual({ callId: call.id, functionId: fn.id, response: { twice: 42, info: { function_id: fn.id, call_id: call.id } } });
    const logs = await h.get(`/functions/${fn.id}/calls/${call.id}/logs`);
    expect(logs.body.items.map((l: { message: string }) => l.message)).toContain('hello from js');
    const listed = await h.post(`/functions/${fn.id}/calls/list`, { filter: { status: 'Completed' } });
    expect(listed.body.items.map((c: { id: number }) => c.id)).toEqual([call.id]);
  });

  it.runIf(hasPython)('runs a Python handler with the arguments it names, in a directory and environment of its own', async () => {
    const fn = await deployed(h, PY_ECHO, { functionPath: 'src/handler.py' });
    const call = await callToEnd(h, fn.id, { a: 2, b: 3 });
    expect(call.status, JSON.stringify(call)).toBe('Completed');
    const { response } = (await h.get(`/functions/${fn.id}/calls/${call.id}/response`)).body;
    expect(response.sum).toBe(5);
    expect(response.info).toEqual({ function_id: fn.id, call_id: call.id });
    expect(response.home).toMatch(/strata-call-/);
    expect(response.env.filter((k: string) => !['LC_CTYPE'].includes(k))).toEqual(['HOME', 'LANG', 'PATH', 'PYTHONUNBUFFERED', 'STRATA_BASE_URL', 'STRATA_PROJECT', 'STRATA_TOKEN', 'TMPDIR']);
    const logs = await h.get(`/functions/${fn.id}/calls/${call.id}/logs`);
    expect(logs.body.items.map((l: { message: string }) => l.message)).toContain('hello from python');
  });

  it.runIf(hasPython)('hands a Python handler its secrets as given, though they are answered scrambled', async () => {
    const fn = await deployed(h, { 'handler.py': 'def handle(secrets, data):\n    return secrets["api-key"] + data["suffix"]\n' }, { secrets: { 'api-key': 's3cret' } });
    expect(fn.secrets).toEqual({ 'api-key': '***' });
    const call = await callToEnd(h, fn.id, { suffix: '!' });
    expect((await h.get(`/functions/${fn.id}/calls/${call.id}/response`)).body.response).toBe('s3cret!');
  });

  it.runIf(hasPython)('ends a call that raises as Failed, with the error', async () => {
    const fn = await deployed(h, { 'handler.py': 'def handle(data):\n    raise ValueError("no good")\n' });
    const call = await callToEnd(h, fn.id);
    expect(call.status).toBe('Failed');
    expect(call.error.message).toBe('ValueError: no good');
  });

  it.runIf(hasPython)('gives a client only where the official SDK is importable, and says so otherwise', async () => {
    const fn = await deployed(h, { 'handler.py': 'def handle(client, data):\n    return client.config.project\n' });
    const call = await callToEnd(h, fn.id);
    expect(call.status).toBe('Failed');
    expect(call.error.message).toMatch(/needs the cognite-sdk package/);
  });

  it.runIf(canRun && process.getuid?.() === 0)('runs a call as a user of its own, in a directory only it reads', async () => {
    const probe = `const fs = require('node:fs');
exports.handle = () => {
  let rootEnv = 'read';
  try { fs.readFileSync('/proc/1/environ'); } catch (e) { rootEnv = e.code; }
  return { uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(), dirMode: fs.statSync('.').mode & 0o777, rootEnv };
};`;
    const fn = await deployed(h, { 'handler.js': probe }, { functionPath: 'handler.js' });
    const call = await callToEnd(h, fn.id);
    const { response } = (await h.get(`/functions/${fn.id}/calls/${call.id}/response`)).body;
    expect(response.uid).toBeGreaterThanOrEqual(2_000_000_000);
    expect(response.gid).toBe(response.uid);
    expect(response.groups).toEqual([response.gid]);
    expect(response.dirMode).toBe(0o700);
    expect(response.rootEnv).toBe('EACCES');
  });

  it.runIf(canRun)('keeps at most 1000 lines of a call\'s output, and says where it cut', async () => {
    const fn = await deployed(h, { 'handler.js': 'exports.handle = () => { for (let i = 0; i < 3000; i++) console.log("line " + i); return 1; };' }, { functionPath: 'handler.js' });
    const call = await callToEnd(h, fn.id);
    expect(call.status).toBe('Completed');
    const logs = (await h.get(`/functions/${fn.id}/calls/${call.id}/logs`)).body.items;
    expect(logs).toHaveLength(1001);
    expect(logs[999].message).toBe('line 999');
    expect(logs[1000].message).toMatch(/further output dropped/);
  });

  it.runIf(hasPython)('holds a call to its memory', async () => {
    const fn = await deployed(h, { 'handler.py': 'def handle(data):\n    block = bytearray(1024 * 1024 * 1024)\n    return len(block)\n' }, { memory: 0.2 });
    const call = await callToEnd(h, fn.id);
    expect(call.status).toBe('Failed');
    expect(call.error.message).toMatch(/MemoryError/);
  });

  it.runIf(canRun)('holds a JavaScript call to its memory', async () => {
    const fn = await deployed(h, { 'handler.js': 'exports.handle = () => { const a = []; for (;;) a.push(new Array(100000).fill(1)); };' }, { functionPath: 'handler.js', memory: 0.1 });
    const call = await callToEnd(h, fn.id);
    expect(call.status).toBe('Failed');
    expect(call.error.message).toMatch(/memory/);
  });

  it('refuses a zip without its handler, a file that is no zip, paths that leave the directory and a zip bomb', async () => {
    const noHandler = await uploadFile(h, zipOf({ 'main.py': 'x = 1' }));
    expect(errorMessage(await h.post('/functions', { items: [{ name: 'f', fileId: noHandler }] }), 400)).toMatch(/items\[0\]\.fileId: .*no handler\.py/);
    const notZip = await uploadFile(h, Buffer.from('plain text'));
    expect(errorMessage(await h.post('/functions', { items: [{ name: 'f', fileId: notZip }] }), 400)).toMatch(/items\[0\]\.fileId: the file is not a zip file/);
    const escaping = await uploadFile(h, zipOf({ 'handler.py': 'x', '../evil.py': 'x' }));
    expect(errorMessage(await h.post('/functions', { items: [{ name: 'f', fileId: escaping }] }), 400)).toMatch(/leaves the directory/);
    const bomb = zipOf({ 'handler.py': 'x' });
    // The central directory's uncompressed size of the entry, raised to almost 4 GiB: refused before anything is inflated.
    bomb.writeUInt32LE(0xfffffff0, bomb.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 24);
    expect(errorMessage(await h.post('/functions', { items: [{ name: 'f', fileId: await uploadFile(h, bomb) }] }), 400)).toMatch(/unpacks to more than/);
    expect(errorMessage(await h.post('/functions', { items: [{ name: 'f', fileId: noHandler, functionType: 'functionApp' }] }), 400)).toMatch(/functionType/);
    expect(errorMessage(await h.post('/functions', { items: [{ name: 'f', fileId: noHandler, functionPath: 'main.rb' }] }), 400)).toMatch(/items\[0\]\.functionPath/);
    expect(errorMessage(await h.post('/functions', { items: [{ name: 'f', fileId: noHandler, memory: 100 }] }), 400)).toMatch(/items\[0\]\.memory/);
    expect((await h.post('/functions/list', { filter: { name: 'f', fileId: noHandler } })).body.items).toEqual([]);
  });

  it('deploys a zip whose data does not unpack as Failed, with the reason', async () => {
    const zip = zipOf({ 'handler.py': 'def handle(data):\n    return 1\n' });
    // An unknown compression method, in the local and the central header: the entries list, but do not unpack.
    zip.writeUInt16LE(99, 8);
    zip.writeUInt16LE(99, zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 10);
    const created = await h.post('/functions', { items: [{ name: 'f', fileId: await uploadFile(h, zip) }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await jobsDone(h);
    const fn = (await h.get(`/functions/${created.body.items[0].id}`)).body;
    expect(fn.status).toBe('Failed');
    expect(fn.error.message).toMatch(/cannot be unpacked/);
    expect(errorMessage(await h.post(`/functions/${fn.id}/call`, { data: {}, nonce: await nonce(h) }), 400)).toMatch(/status is Failed/);
  });

  it('refuses a call of an unknown function, and a call without a nonce', async () => {
    expect((await h.post('/functions/987654321/call', { data: {}, nonce: await nonce(h) })).status).toBe(400);
    const fn = await deployed(h, JS_ECHO, { functionPath: 'handler.js' });
    expect(errorMessage(await h.post(`/functions/${fn.id}/call`, { data: {} }), 400)).toMatch(/^nonce: /);
    expect(errorMessage(await h.get(`/functions/${fn.id}/calls/987654321`), 400)).toMatch(/987654321|missing/);
  });

  it('lets functionsAcl:RUN or WRITE call, and READ only read', async () => {
    const fn = await deployed(h, JS_ECHO, { functionPath: 'handler.js' });
    const sessions = capability('sessionsAcl', ['CREATE']);
    const runner = await namedClientToken(h, 'runner', [capability('functionsAcl', ['RUN']), sessions]);
    const reader = await namedClientToken(h, 'reader', [capability('functionsAcl', ['READ']), sessions]);
    const asRunner = await h.request('POST', `/functions/${fn.id}/call`, { data: { n: 1 }, nonce: await nonce(h, bearer(runner)) }, bearer(runner));
    expect(asRunner.status).toBe(201);
    const asReader = await h.request('POST', `/functions/${fn.id}/call`, { data: { n: 1 }, nonce: await nonce(h, bearer(reader)) }, bearer(reader));
    expect(errorMessage(asReader, 403)).toMatch(/functionsAcl:RUN \(or WRITE\)/);
    expect(errorMessage(await h.request('POST', '/functions/delete', { items: [{ id: fn.id }] }, bearer(runner)), 403)).toMatch(/functionsAcl:WRITE/);
    expect((await h.request('GET', `/functions/${fn.id}/calls`, undefined, bearer(reader))).status).toBe(200);
    await jobsDone(h);
  });

  it('makes a function only of a file its creator may read, and answers one it may not as one that does not exist', async () => {
    const writer = await namedClientToken(h, 'writer', [capability('functionsAcl', ['WRITE'])]);
    const fileId = await uploadFile(h, zipOf(JS_ECHO));
    const hidden = errorMessage(await h.request('POST', '/functions', { items: [{ name: 'f', fileId, functionPath: 'handler.js' }] }, bearer(writer)), 400);
    const absent = errorMessage(await h.request('POST', '/functions', { items: [{ name: 'f', fileId: 987654321, functionPath: 'handler.js' }] }, bearer(writer)), 400);
    expect(hidden.replace(String(fileId), 'ID')).toBe(absent.replace('987654321', 'ID'));
  });

  it('answers its limits and status', async () => {
    const limits = await h.get('/functions/limits');
    expect(limits.body).toMatchObject({ timeoutMinutes: 10, runtimes: expect.any(Array), cpuCores: { default: expect.any(Number) }, memoryGb: { default: 1 } });
    expect((await h.post('/functions/status', {})).status).toBe(202);
    expect((await h.get('/functions/status')).body).toEqual({ status: 'activated' });
  });

  it('deletes a function with its calls and schedules', async () => {
    const fn = await deployed(h, JS_ECHO, { functionPath: 'handler.js', externalId: 'to-delete' });
    await callToEnd(h, fn.id, { n: 1 });
    const schedule = await h.post('/functions/schedules', { items: [{ name: 's', cronExpression: '0 * * * *', functionId: fn.id, nonce: await nonce(h) }] });
    expect(schedule.status).toBe(201);
    expect((await h.post('/functions/delete', { items: [{ externalId: 'to-delete' }] })).status).toBe(200);
    expect((await h.get(`/functions/${fn.id}`)).status).toBe(400);
    expect((await h.get(`/functions/schedules/${schedule.body.items[0].id}`)).status).toBe(400);
  });
});

describe('schedules', () => {
  it('makes a call at each time its cron expression names, with its data', async () => {
    const fn = await deployed(h, JS_ECHO, { functionPath: 'handler.js' });
    const created = await h.post('/functions/schedules', {
      items: [{ name: 'minutely', cronExpression: '* * * * *', functionId: fn.id, data: { n: 5 }, nonce: await nonce(h) }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const schedule = created.body.items[0];
    expect(schedule).toMatchObject({ name: 'minutely', cronExpression: '* * * * *', functionId: fn.id, sessionId: expect.any(String) });
    expect(schedule).not.toHaveProperty('data');
    expect((await h.get(`/functions/schedules/${schedule.id}/input_data`)).body).toEqual({ id: schedule.id, data: { n: 5 } });
    expect((await h.post('/functions/schedules/list', { filter: { functionId: fn.id } })).body.items.map((s: { id: number }) => s.id)).toEqual([schedule.id]);

    expect((await h.get(`/functions/${fn.id}/calls`)).body.items).toEqual([]);
    clock.advance(60_000);
    await h.strata.services.jobs!.settled();
    await jobsDone(h);
    const calls = (await h.get(`/functions/${fn.id}/calls`)).body.items;
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ status: 'Completed', scheduleId: schedule.id, scheduledTime: expect.any(Number) });
    expect((await h.get(`/functions/${fn.id}/calls/${calls[0].id}/response`)).body.response.twice).toBe(10);

    expect((await h.post('/functions/schedules/delete', { items: [{ id: schedule.id }] })).status).toBe(200);
    clock.advance(60_000);
    await h.strata.services.jobs!.settled();
    await jobsDone(h);
    expect((await h.get(`/functions/${fn.id}/calls`)).body.items).toHaveLength(1);
  });

  it('refuses a cron expression that does not parse, an unknown function and a missing nonce', async () => {
    const fn = await deployed(h, JS_ECHO, { functionPath: 'handler.js' });
    const item = { name: 's', cronExpression: '0 * * * *', functionId: fn.id, nonce: await nonce(h) };
    expect(errorMessage(await h.post('/functions/schedules', { items: [{ ...item, cronExpression: 'every day' }] }), 400)).toMatch(/items\[0\]\.cronExpression: "every day"/);
    expect(errorMessage(await h.post('/functions/schedules', { items: [{ ...item, functionId: 987654321 }] }), 400)).toMatch(/items\[0\]\.functionId/);
    expect(errorMessage(await h.post('/functions/schedules', { items: [{ ...item, nonce: undefined }] }), 400)).toMatch(/items\[0\]\.nonce/);
    expect((await h.post('/functions/schedules/list', {})).body.items.filter((s: { functionId: number }) => s.functionId === fn.id)).toEqual([]);
  });
});
