/**
 * Files through the official JavaScript client, called as its users call it: upload with content (waiting
 * until the file reads as uploaded), multipart upload sessions, download URLs fetched with the client,
 * list, search, aggregate, retrieve, update and delete, and a CogniteFile node's file by instance id.
 */
import { HttpResponseType, type CogniteClient, type FileInfo } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'files' });
  client = h.client;
});
afterAll(() => h?.close());

const MiB = 1024 * 1024;

describe('files through the official JavaScript client', () => {
  let text: FileInfo;

  it('uploads a file with its content and waits until it is uploaded', async () => {
    const sourceCreatedTime = new Date(Date.UTC(2024, 4, 1));
    text = (await client.files.upload(
      { externalId: 'sdk-notes', name: 'meeting notes.txt', mimeType: 'text/plain', directory: '/sdk/notes', metadata: { kind: 'notes' }, sourceCreatedTime },
      'some notes',
      false,
      true,
    )) as FileInfo;
    expect(text).toMatchObject({ externalId: 'sdk-notes', uploaded: true, directory: '/sdk/notes', sourceCreatedTime });
    expect(text.uploadedTime).toBeInstanceOf(Date);
  });

  it('gives download URLs that the client fetches, for text and for binary content', async () => {
    const [{ downloadUrl }] = await client.files.getDownloadUrls([{ id: text.id }]);
    const got = await client.get<string>(downloadUrl, { responseType: HttpResponseType.Text });
    expect(got.data).toBe('some notes');
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    const binary = (await client.files.upload({ name: 'data.bin', mimeType: 'application/octet-stream' }, bytes, false, true)) as FileInfo;
    const [{ downloadUrl: url }] = await client.files.getDownloadUrls([{ id: binary.id }]);
    const back = await client.get<ArrayBuffer>(url, { responseType: HttpResponseType.ArrayBuffer });
    expect(Buffer.from(back.data).equals(bytes)).toBe(true);
  });

  it('uploads in parts through a multipart upload session, completing it with the last part', async () => {
    const session = await client.files.multipartUploadSession({ externalId: 'sdk-parts', name: 'parts.bin' }, 3);
    expect(session.getNotCompletedParts()).toEqual([0, 1, 2]);
    const parts = [Buffer.alloc(5 * MiB, 1), Buffer.alloc(5 * MiB, 2), Buffer.from('tail')];
    await Promise.all([session.uploadPart(2, parts[2]), session.uploadPart(0, parts[0])]);
    await session.uploadPart(1, parts[1]);
    expect(session.getFinished()).toBe(true);
    const [file] = await client.files.retrieve([{ externalId: 'sdk-parts' }]);
    expect(file.uploaded).toBe(true);
    const [{ downloadUrl }] = await client.files.getDownloadUrls([{ externalId: 'sdk-parts' }]);
    const back = await client.get<ArrayBuffer>(downloadUrl, { responseType: HttpResponseType.ArrayBuffer });
    expect(Buffer.from(back.data).equals(Buffer.concat(parts))).toBe(true);
  });

  it('lists, searches, counts and retrieves', async () => {
    const listed = await client.files.list({ filter: { directoryPrefix: '/sdk', uploaded: true } }).autoPagingToArray();
    expect(listed.map((f) => f.externalId)).toEqual(['sdk-notes']);
    const found = await client.files.search({ search: { name: 'meeting' } });
    expect(found.map((f) => f.id)).toEqual([text.id]);
    const [{ count }] = await client.files.aggregate({ filter: { uploaded: true } });
    expect(count).toBe(3);
    expect(await client.files.retrieve([{ id: 1 }], { ignoreUnknownIds: true })).toEqual([]);
  });

  it('updates and deletes', async () => {
    const [updated] = await client.files.update([{ id: text.id, update: { source: { set: 'sdk' }, metadata: { add: { more: 'yes' }, remove: [] } } }]);
    expect(updated).toMatchObject({ source: 'sdk', metadata: { kind: 'notes', more: 'yes' } });
    expect(await client.files.delete([{ id: text.id }])).toEqual({});
    const failure = await clientFailure(client.files.retrieve([{ id: text.id }]));
    expect(failure.status).toBe(400);
    expect(failure.missing).toEqual([{ id: text.id }]);
  });

  it("reads, updates and refuses to download a CogniteFile node's file by instance id until it is uploaded", async () => {
    await client.spaces.upsert([{ space: 'sdk_files' }]);
    await client.instances.upsert({
      items: [{ instanceType: 'node', space: 'sdk_files', externalId: 'sdk_doc', sources: [{ source: { type: 'view', space: 'cdf_cdm', externalId: 'CogniteFile', version: 'v1' }, properties: {} }] }],
    });
    const instanceId = { space: 'sdk_files', externalId: 'sdk_doc' };
    const [file] = await client.files.retrieve([{ instanceId }]);
    expect(file.instanceId).toEqual(instanceId);
    const [updated] = await client.files.update([{ instanceId, update: { metadata: { set: { testKey: 'testVal' } } } }]);
    expect(updated.metadata).toEqual({ testKey: 'testVal' });
    await expect(client.files.getDownloadUrls([{ instanceId }])).rejects.toThrow(/Files not uploaded/);
  });
});
