/** Shared steps of the functions tests: zips of code uploaded as files, functions made from them, calls run to their end. */
import { strToU8, zipSync } from 'fflate';
import { expect } from 'vitest';
import { hasProgram } from '../support/external.js';
import type { Harness } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';

/** Whether calls can run here: their limits are set with `prlimit` (sandbox.ts). */
export const canRun = hasProgram('prlimit', 'util-linux');
/** Whether Python handlers can run: the interpreter is on the PATH sandbox.ts looks on. */
export const hasPython = canRun && hasProgram('python3', 'python3', '--version', { PATH: '/usr/local/bin:/usr/bin:/bin' });

export function zipOf(files: Record<string, string>): Buffer {
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)]))));
}

/** Uploads `content` as a new file; its id. */
export async function uploadFile(h: Harness, content: Buffer, name = 'code.zip'): Promise<number> {
  const created = await h.post('/files', { name, mimeType: 'application/zip' });
  expect(created.status).toBe(201);
  const { pathname, search } = new URL(created.body.uploadUrl);
  const put = await h.strata.app.inject({ method: 'PUT', url: pathname + search, payload: content, headers: { 'content-type': 'application/zip' } });
  expect(put.statusCode).toBe(200);
  return created.body.id as number;
}

/** Creates a function of the code `files` and waits for its deployment; the function as answered then. */
export async function deployed(h: Harness, files: Record<string, string>, fields: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const fileId = await uploadFile(h, zipOf(files));
  const created = await h.post('/functions', { items: [{ name: 'f', fileId, ...fields }] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await jobsDone(h);
  const fn = await h.get(`/functions/${created.body.items[0].id}`);
  expect(fn.body.status, JSON.stringify(fn.body)).toBe('Ready');
  return fn.body;
}

export async function nonce(h: Harness, headers: Record<string, string> = {}): Promise<string> {
  const res = await h.request('POST', '/sessions', { items: [{ tokenExchange: true }] }, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items[0].nonce as string;
}

/** Calls the function and waits for the call to end; the call as answered then. */
export async function callToEnd(h: Harness, functionId: number, data: unknown = {}): Promise<Record<string, any>> {
  const res = await h.post(`/functions/${functionId}/call`, { data, nonce: await nonce(h) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.status).toBe('Running');
  await jobsDone(h);
  return (await h.get(`/functions/${functionId}/calls/${res.body.id}`)).body;
}
