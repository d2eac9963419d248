/**
 * Sending writeback requests, as durable jobs: a request goes `in_progress`, its gateway's session is
 * opened, and its items are created one after the other; it ends `done`, or `failed` with what went wrong
 * (the first item refused, naming it, or a gateway that could not be reached). Each item created is
 * recorded at once, with the key SAP gave it, so a job run again after its process died sends only the
 * items not yet sent.
 */
import type { AreaRuntime } from '../../http/area.js';
import type { Job } from '../../storage/jobs/jobs.js';
import { sql } from '../../storage/sql.js';
import { compileMapping, MappingError, type CompiledMapping } from './mapping-language.js';
import type { RequestItem } from './model.js';
import { clip, createRecord, openSession, SapFailure, type SapRecord } from './odata.js';
import { endpointRow, gatewayOf, headerProblem, SEND_JOB } from './service.js';

/** Requests one process sends at once, across projects; each project has at most 50 open (service.ts). */
const SENDING = 100;

interface RequestRow {
  id: number;
  endpointId: string;
  status: string;
  request: string;
}

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** An endpoint's mapping, by its external id: what transforms each payload before it is sent. */
interface Mapping {
  externalId: string;
  compiled: CompiledMapping;
}

async function mappingOf(runtime: AreaRuntime, projectId: number, externalId: string | null): Promise<Mapping | undefined> {
  if (externalId === null) return undefined;
  const row = await runtime.store.get<{ expression: string }>(
    sql`SELECT expression FROM sap_writeback_mappings WHERE project_id = ${projectId} AND external_id = ${externalId}`,
  );
  if (!row) throw new SapFailure(`the mapping ${JSON.stringify(externalId)} was deleted before the request was sent`);
  try {
    return { externalId, compiled: compileMapping(row.expression) };
  } catch (err) {
    if (err instanceof MappingError) throw new SapFailure(`the mapping ${JSON.stringify(externalId)} is not a valid expression: ${err.message}`);
    throw err;
  }
}

/** A payload as its endpoint's mapping makes it (the payload is `input`); the result must be an object. */
function mapped(runtime: AreaRuntime, mapping: Mapping | undefined, payload: Record<string, unknown>): Record<string, unknown> {
  if (!mapping) return payload;
  let result: unknown;
  try {
    result = mapping.compiled.run(payload, { now: () => runtime.now() });
  } catch (err) {
    if (err instanceof MappingError) throw new SapFailure(`the mapping ${JSON.stringify(mapping.externalId)} failed: ${err.message}`);
    throw err;
  }
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    const got = result === null ? 'null' : Array.isArray(result) ? 'an array' : `a ${typeof result}`;
    throw new SapFailure(`the mapping ${JSON.stringify(mapping.externalId)} made ${got}, not an object`);
  }
  return result as Record<string, unknown>;
}

async function recordOf(runtime: AreaRuntime, projectId: number, item: RequestItem, mapping: Mapping | undefined): Promise<SapRecord> {
  const payload = mapped(runtime, mapping, item.payload);
  if (!item.file) return { json: payload };
  const stream = await runtime.blobs.get(projectId, item.file.blobKey);
  if (!stream) throw new SapFailure(`the content of the file ${JSON.stringify(item.fileId)} is gone`);
  // The payload's fields describe the document to the attachment service (its object type and key), as headers.
  const problem = mapping && headerProblem(payload);
  if (problem) throw new SapFailure(`the mapping ${JSON.stringify(mapping.externalId)} made the field ${JSON.stringify(problem.field)}: ${problem.message}`);
  const headers = payload as Record<string, string>;
  return { bytes: await readAll(stream), contentType: item.file.mimeType, headers: { ...headers, slug: encodeURIComponent(item.file.name) } };
}

async function send(runtime: AreaRuntime, job: Job): Promise<unknown> {
  const { requestId } = job.payload as { requestId: string };
  const projectId = job.projectId;
  const row = await runtime.store.get<RequestRow>(
    sql`SELECT id, endpoint_id AS "endpointId", status, request FROM sap_writeback_requests WHERE project_id = ${projectId} AND request_id = ${requestId}`,
  );
  if (!row || row.status === 'done' || row.status === 'failed') return { status: row?.status ?? 'gone' };
  const items = JSON.parse(row.request) as RequestItem[];
  const write = (status: string, errorMessage: string | null = null) => {
    const now = runtime.now();
    return runtime.store.transaction((tx) =>
      tx.run(sql`UPDATE sap_writeback_requests SET status = ${status}, request = ${JSON.stringify(items)}, error_message = ${errorMessage}, last_updated_time = ${now}
        WHERE project_id = ${projectId} AND id = ${row.id}`),
    );
  };
  await write('in_progress');
  let at: number | undefined;
  try {
    const endpoint = await endpointRow(runtime.store, projectId, row.endpointId);
    if (!endpoint) throw new SapFailure(`the endpoint ${JSON.stringify(row.endpointId)} was deleted before the request was sent`);
    const gateway = await gatewayOf(runtime.store, projectId, endpoint.instanceId);
    if (!gateway) throw new SapFailure(`the SAP instance ${JSON.stringify(endpoint.instanceId)} was deleted before the request was sent`);
    const mapping = await mappingOf(runtime, projectId, endpoint.mappingId);
    const session = await openSession(runtime.outbound, gateway, endpoint.endpointType);
    for (const [i, item] of items.entries()) {
      if (item.sent) continue;
      at = i;
      const sapObjectId = await createRecord(runtime.outbound, session, await recordOf(runtime, projectId, item, mapping));
      items[i] = { ...item, sent: true, ...(sapObjectId !== undefined ? { sapObjectId } : {}) };
      await write('in_progress');
    }
  } catch (err) {
    if (!(err instanceof SapFailure)) {
      // Its last attempt: the request ends rather than staying open, and counting against the project's most.
      if (job.attempts >= job.maxAttempts) await write('failed', 'the request could not be sent: the server failed while sending it');
      throw err;
    }
    await write('failed', clip(at === undefined ? err.message : `request[${at}]: ${err.message}`));
    return { status: 'failed' };
  }
  await write('done');
  return { status: 'done' };
}

export function registerWritebackJobs(runtime: AreaRuntime): void {
  runtime.jobs.register(SEND_JOB, (job) => send(runtime, job), { concurrency: SENDING });
}
