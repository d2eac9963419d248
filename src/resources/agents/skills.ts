/**
 * Skills: instruction sets agents load (their `content`, in SKILL.md form), with files uploaded as one
 * bundle kept on the blob store under `skills/<skill id>/<random>`. A new upload writes a new blob and the
 * one it replaces is deleted once the write naming the new one has committed; a skill's blob goes with it,
 * once its delete has committed.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { badRequest, notFound } from '../../http/errors.js';
import { EncodedBody } from '../../http/json-text.js';
import type { Services } from '../../http/services.js';
import { sql } from '../../storage/sql.js';
import type { RefInput } from '../../query/refs.js';
import { createItems, deleteItems, fromModel, inWrite, upsertItems, type ResourceSpec } from '../crud.js';
import { blobsOf, deleteBlobs } from '../files/blobs.js';
import { SKILL_LIMITS, skillModel } from './model.js';
import type { SkillCreate } from './schema.js';

export const skillSpec: ResourceSpec<SkillCreate> = fromModel(skillModel);

/** Deletes skills, and their uploaded files once the delete has committed. */
export async function deleteSkills(services: Services, projectId: number, items: readonly RefInput[], ignoreUnknownIds: boolean): Promise<void> {
  let keys: string[] = [];
  const beforeDelete: ResourceSpec<unknown>['beforeDelete'] = async (ids, { db }) => {
    if (ids.length === 0) return;
    keys = (await db.all<{ key: string }>(sql`SELECT blob_key AS key FROM ai_skills WHERE project_id = ${projectId} AND id IN (${ids}) AND blob_key IS NOT NULL`)).map((k) => k.key);
  };
  await deleteItems({ ...(skillSpec as ResourceSpec<unknown>), beforeDelete }, services, projectId, items, ignoreUnknownIds);
  await deleteBlobs(services, projectId, keys);
}

/**
 * Creates skills; with `overwrite`, a skill whose external id exists is replaced whole, its uploaded files
 * with it (deleted once the write has committed).
 */
export async function createSkills(services: Services, projectId: number, items: readonly SkillCreate[], overwrite: boolean) {
  const { written, replaced } = await inWrite(services, async (services) => {
    const { db } = services;
    const stored = await db.all<{ external_id: string; blob_key: string | null }>(
      sql`SELECT external_id, blob_key FROM ai_skills WHERE project_id = ${projectId} AND external_id IN (${items.map((i) => i.externalId!)})`,
    );
    const added = overwrite ? items.filter((i) => !stored.some((s) => s.external_id === i.externalId)).length : items.length;
    const held = Number((await db.get<{ n: number }>(sql`SELECT COUNT(*) AS n FROM ai_skills WHERE project_id = ${projectId}`))?.n ?? 0);
    if (held + added > SKILL_LIMITS.perProject) {
      throw badRequest(`items: a project holds at most ${SKILL_LIMITS.perProject} skills; this one holds ${held}, and the request adds ${added}`);
    }
    if (!overwrite) return { written: await createItems(skillSpec, services, projectId, items), replaced: [] };
    const replaced = stored.flatMap((s) => (s.blob_key ? [s.blob_key] : []));
    return { written: await upsertItems(skillSpec, services, projectId, items), replaced };
  });
  await deleteBlobs(services, projectId, replaced);
  return written;
}

interface SkillRow {
  id: number;
  content: string | null;
  blob_key: string | null;
  files: string | null;
}

async function skillRow(services: Services, projectId: number, externalId: string): Promise<SkillRow> {
  const row = await services.db.get<SkillRow>(sql`SELECT id, content, blob_key, files FROM ai_skills WHERE project_id = ${projectId} AND external_id = ${externalId}`);
  if (!row) throw notFound(`There is no skill "${externalId}"`);
  return row;
}

export async function uploadSkillFiles(services: Services, projectId: number, externalId: string, content: string, mimeType = 'application/zip') {
  const bytes = Buffer.from(content, 'base64');
  if (bytes.length > SKILL_LIMITS.upload) throw badRequest(`content: the files of a skill are at most ${SKILL_LIMITS.upload} bytes; these are ${bytes.length}`);
  const { id } = await skillRow(services, projectId, externalId);
  const key = `skills/${id}/${randomBytes(12).toString('base64url')}`;
  await blobsOf(services).put(projectId, key, Readable.from([bytes]), { maxBytes: SKILL_LIMITS.upload });
  const files = { mimeType, size: bytes.length };
  let replaced: string | null;
  try {
    replaced = await inWrite(services, async ({ db }) => {
      const current = await db.get<{ blob_key: string | null }>(sql`SELECT blob_key FROM ai_skills WHERE project_id = ${projectId} AND id = ${id}`);
      if (!current) throw notFound(`There is no skill "${externalId}"`);
      await db.run(sql`UPDATE ai_skills SET blob_key = ${key}, files = ${JSON.stringify(files)}, last_updated_time = ${services.now()} WHERE project_id = ${projectId} AND id = ${id}`);
      return current.blob_key;
    });
  } catch (err) {
    await deleteBlobs(services, projectId, [key]);
    throw err;
  }
  if (replaced) await deleteBlobs(services, projectId, [replaced]);
  return { externalId, files };
}

/** The skill's uploaded files as they were uploaded; without an upload, its content as SKILL.md. */
export async function downloadSkill(services: Services, projectId: number, externalId: string): Promise<EncodedBody> {
  const row = await skillRow(services, projectId, externalId);
  if (row.blob_key) {
    const stream = await blobsOf(services).get(projectId, row.blob_key);
    if (stream) {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return new EncodedBody((JSON.parse(row.files!) as { mimeType: string }).mimeType, Buffer.concat(chunks));
    }
  }
  return new EncodedBody('text/markdown; charset=utf-8', Buffer.from(row.content ?? '', 'utf8'));
}
