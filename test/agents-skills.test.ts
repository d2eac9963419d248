/**
 * Skills (beta channel): create, list, by ids, delete, upload and download of a skill's files (kept on the
 * blob store), and their limits: 200 per project, an external id of 1–128 characters without NUL that does
 * not start with `cdf-`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SKILL_LIMITS } from '../src/resources/agents/model.js';
import { sql } from '../src/storage/sql.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

const BETA = { 'cdf-version': '20230101-beta' };
let h: Harness;
const post = (path: string, body: unknown) => h.request('POST', path, body, BETA);
const get = (path: string) => h.request('GET', path, undefined, BETA);
const skill = (externalId: string, extra: Record<string, unknown> = {}) => ({ externalId, name: 'pump-checks', description: 'How to check a pump', ...extra });

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

it('creates, lists, retrieves and deletes a skill', async () => {
  const content = '---\nname: pump-checks\ndescription: How to check a pump\n---\nLook at the bearings.';
  const created = await post('/ai/skills', { items: [skill('s1', { content })] });
  expect(created.status).toBe(201);
  expect(created.body.items[0]).toMatchObject({ externalId: 's1', name: 'pump-checks', content });
  expect(created.body.items[0].blobKey).toBeUndefined();
  expect(errorMessage(await post('/ai/skills', { items: [skill('s1')] }), 409)).toBeTruthy();
  expect((await get('/ai/skills')).body.items.map((s: { externalId: string }) => s.externalId)).toEqual(['s1']);
  expect((await post('/ai/skills/byids', { items: [{ externalId: 's1' }] })).body.items[0].description).toBe('How to check a pump');

  const md = await get('/ai/skills/s1/download');
  expect(md.status).toBe(200);
  expect(md.headers['content-type']).toMatch(/text\/markdown/);
  expect(md.body).toBe(content);

  expect((await post('/ai/skills/delete', { items: [{ externalId: 's1' }] })).status).toBe(200);
  expect(errorMessage(await post('/ai/skills/byids', { items: [{ externalId: 's1' }] }), 400)).toBeTruthy();
});

it("uploads a skill's files to the blob store and downloads them as uploaded; deleting the skill deletes them", async () => {
  await post('/ai/skills', { items: [skill('s2')] });
  const bundle = Buffer.from('PK\u0003\u0004 a zip archive, as far as Strata cares');
  const up = await post('/ai/skills/s2/upload', { content: bundle.toString('base64') });
  expect(up.status).toBe(200);
  expect(up.body).toEqual({ externalId: 's2', files: { mimeType: 'application/zip', size: bundle.length } });
  const down = await h.strata.app.inject({ method: 'GET', url: `${h.base}/ai/skills/s2/download`, headers: { authorization: `Bearer ${h.token}`, ...BETA } });
  expect(down.statusCode).toBe(200);
  expect(down.headers['content-type']).toBe('application/zip');
  expect(down.rawPayload.equals(bundle)).toBe(true);

  const blobKey = async () => (await h.strata.store.get<{ blob_key: string }>(sql`SELECT blob_key FROM ai_skills WHERE external_id = 's2'`))!.blob_key;
  const projectId = (await h.strata.store.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!.id;
  const first = await blobKey();
  const second = Buffer.from('# SKILL.md only');
  expect((await post('/ai/skills/s2/upload', { content: second.toString('base64'), mimeType: 'text/markdown' })).status).toBe(200);
  const key = await blobKey();
  expect(await h.strata.services.blobs!.head(projectId, key)).toEqual({ size: second.length });
  expect(await h.strata.services.blobs!.head(projectId, first)).toBeUndefined();

  await post('/ai/skills/delete', { items: [{ externalId: 's2' }] });
  expect(await h.strata.services.blobs!.head(projectId, key)).toBeUndefined();
  expect(errorMessage(await get('/ai/skills/s2/download'), 404)).toMatch(/s2/);
  expect(errorMessage(await post('/ai/skills/s2/upload', { content: 'AAAA' }), 404)).toMatch(/s2/);
});

it('replaces a skill whole with overwrite=true, as the toolkit writes skills, its uploaded files with it', async () => {
  await post('/ai/skills', { items: [skill('ow', { content: 'first' })] });
  await post('/ai/skills/ow/upload', { content: Buffer.from('bundle').toString('base64') });
  const { blob_key: key } = (await h.strata.store.get<{ blob_key: string }>(sql`SELECT blob_key FROM ai_skills WHERE external_id = 'ow'`))!;
  const projectId = (await h.strata.store.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!.id;
  const first = (await post('/ai/skills/byids', { items: [{ externalId: 'ow' }] })).body.items[0];
  const replaced = await post('/ai/skills?overwrite=true', { items: [skill('ow', { description: 'Second', content: 'second' })] });
  expect(replaced.status).toBe(201);
  expect(replaced.body.items[0]).toMatchObject({ externalId: 'ow', description: 'Second', content: 'second', createdTime: first.createdTime });
  expect(replaced.body.items[0].files).toBeUndefined();
  expect(await h.strata.services.blobs!.head(projectId, key)).toBeUndefined();
  expect((await get('/ai/skills/ow/download')).body).toBe('second');
  expect((await post('/ai/skills?overwrite=true', { items: [skill('ow-new')] })).status).toBe(201);
  await post('/ai/skills/delete', { items: [{ externalId: 'ow' }] });
  await post('/ai/skills/delete', { items: [{ externalId: 'ow-new' }] });
});

it('refuses external ids that are empty, too long, hold NUL or start with cdf-', async () => {
  for (const externalId of ['', 'x'.repeat(129), 'a\u0000b', 'cdf-mine']) {
    expect(errorMessage(await post('/ai/skills', { items: [skill(externalId)] }), 400)).toMatch(/items\[0\]\.externalId/);
  }
  expect((await post('/ai/skills', { items: [skill('x'.repeat(128))] })).status).toBe(201);
  expect((await post('/ai/skills', { items: [skill('cdfmine')] })).status).toBe(201);
  expect(errorMessage(await get('/ai/skills/cdf-x/download'), 400)).toMatch(/skillExternalId/);
});

it(`holds at most ${SKILL_LIMITS.perProject} skills in a project`, async () => {
  const held = (await get('/ai/skills')).body.items.length;
  for (let i = held; i < SKILL_LIMITS.perProject; i++) expect((await post('/ai/skills', { items: [skill(`many-${i}`)] })).status).toBe(201);
  expect(errorMessage(await post('/ai/skills', { items: [skill('one-too-many')] }), 400)).toMatch(/at most 200 skills/);
  expect((await post('/ai/skills/byids', { items: [{ externalId: 'one-too-many' }], ignoreUnknownIds: true })).body.items).toEqual([]);
});
