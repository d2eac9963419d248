/**
 * SAP writeback requests over HTTP, sent by durable jobs to an OData gateway the test starts: what the
 * gateway receives (a CSRF token fetched first, then each record with it), the status and answer recorded,
 * attachments, bad input, and at most 50 requests of a project open at once (the 51st is a 429 that
 * records nothing), with the gateway holding requests open so that they are truly under way together.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WRITEBACK_LIMITS } from '../src/resources/writeback/model.js';
import { SEND_JOB } from '../src/resources/writeback/service.js';
import { sql } from '../src/storage/sql.js';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { jobsDone } from './support/jobs.js';
import { freePort } from './support/net.js';
import { SAP_PASSWORD, SAP_USER, startSapGateway, type SapGateway } from './support/sap-gateway.js';

const WB = '/writeback/sap';
let h: Harness;
let sap: SapGateway;

const instance = (externalId: string, fields: Record<string, unknown> = {}) => ({ externalId, gatewayUrl: sap.url, client: 100, username: SAP_USER, password: SAP_PASSWORD, ...fields });
const notification = (text: string) => ({ NotificationText: text, NotificationType: 'M1', TechnicalObject: 'PUMP-01' });

async function setUp(project = 'dev') {
  const at = (path: string) => `/api/v1/projects/${project}${WB}${path}`;
  const dead = await freePort();
  for (const [path, body] of [
    ['/instances', { items: [instance('sap'), instance('sap-wrong', { password: 'wrong' }), instance('sap-dead', { gatewayUrl: `http://127.0.0.1:${dead}` })] }],
    ['/mappings', { items: [{ externalId: 'as-is', expression: 'input' }, { externalId: 'reshape', expression: '{ "NotificationText": input.text }' }] }],
    [
      '/endpoints',
      {
        items: [
          { externalId: 'notes', endpointType: 'notification', instanceId: 'sap' },
          { externalId: 'notes-as-is', endpointType: 'notification', instanceId: 'sap', mappingId: 'as-is' },
          { externalId: 'notes-reshaped', endpointType: 'notification', instanceId: 'sap', mappingId: 'reshape' },
          { externalId: 'notes-wrong', endpointType: 'notification', instanceId: 'sap-wrong' },
          { externalId: 'notes-dead', endpointType: 'notification', instanceId: 'sap-dead' },
          { externalId: 'docs', endpointType: 'attachment', instanceId: 'sap' },
        ],
      },
    ],
  ] as const) {
    const res = await h.request('POST', at(path), body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
}

beforeAll(async () => {
  sap = await startSapGateway();
  // Requests held by the gateway stay open for as long as the test holds them.
  h = await startHarness({}, { STRATA_OUTBOUND_ALLOW: 'loopback', STRATA_OUTBOUND_DEADLINE_MS: '120000', STRATA_CLIENTS: namedClients('wb-files-elsewhere', 'wb-no-files') });
  await setUp();
});
afterAll(async () => {
  await h.close();
  await sap.close();
});

const send = (endpointId: string, request: unknown[], project?: string) =>
  project ? h.request('POST', `/api/v1/projects/${project}${WB}/requests`, { items: [{ endpointId, request }] }) : h.post(`${WB}/requests`, { items: [{ endpointId, request }] });

async function sentToEnd(endpointId: string, request: unknown[]) {
  const res = await send(endpointId, request);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await jobsDone(h);
  const read = await h.post(`${WB}/requests/byids`, { items: [{ requestId: res.body.items[0].requestId }] });
  expect(read.status).toBe(200);
  return read.body.items[0];
}

describe('a writeback request', () => {
  it('is recorded pending, sent with a CSRF token, and ends done with the key SAP gave each record', async () => {
    const received = sap.received.length;
    const res = await send('notes', [{ key: 'wo-1', payload: notification('Pump leaks') }, { key: 'wo-2', payload: notification('Pump noisy') }]);
    expect(res.status).toBe(200);
    const [created] = res.body.items;
    expect(created).toEqual({
      requestId: expect.any(String),
      endpointId: 'notes',
      request: [{ key: 'wo-1', payload: notification('Pump leaks') }, { key: 'wo-2', payload: notification('Pump noisy') }],
      status: 'pending',
      createdTime: expect.any(Number),
      lastUpdatedTime: expect.any(Number),
    });
    await jobsDone(h);

    const sent = sap.received.slice(received);
    expect(sent.map((r) => JSON.parse(r.body.toString()))).toEqual([notification('Pump leaks'), notification('Pump noisy')]);
    for (const r of sent) {
      expect(r.path).toBe('/sap/opu/odata/sap/API_MAINTNOTIFICATION/MaintenanceNotification');
      expect(r.client).toBe('100');
      expect(r.headers['x-csrf-token']).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.headers.cookie).toMatch(/SAP_SESSIONID=/);
    }
    const keys = sent.map((_, i) => String(10000000 + received + i));

    const full = await h.post(`${WB}/requests/byids`, { items: [{ requestId: created.requestId }] });
    expect(full.body.items[0]).toMatchObject({
      requestId: created.requestId,
      status: 'done',
      request: [
        { key: 'wo-1', payload: notification('Pump leaks'), sapObjectId: keys[0] },
        { key: 'wo-2', payload: notification('Pump noisy'), sapObjectId: keys[1] },
      ],
    });
    expect(full.body.items[0].errorMessage).toBeUndefined();
    const list = await h.get(`${WB}/requests`);
    expect(list.status).toBe(202);
    expect(list.body.items.find((r: { requestId: string }) => r.requestId === created.requestId)).toEqual({
      requestId: created.requestId,
      endpointId: 'notes',
      request: [
        { key: 'wo-1', sapObjectId: keys[0] },
        { key: 'wo-2', sapObjectId: keys[1] },
      ],
      status: 'done',
      createdTime: expect.any(Number),
      lastUpdatedTime: expect.any(Number),
    });
  });

  it('ends failed with the gateway answer when a record is refused, keeping the records created before it', async () => {
    const done = await sentToEnd('notes', [{ payload: notification('Valve stuck') }, { payload: { TechnicalObject: 'PUMP-01' } }]);
    expect(done.status).toBe('failed');
    expect(done.errorMessage).toMatch(/^request\[1\]: the SAP gateway refused the record: HTTP 400: Property NotificationText is required$/);
    expect(done.request[0].sapObjectId).toEqual(expect.any(String));
    expect(done.request[1].sapObjectId).toBeUndefined();
  });

  it('keeps at most 1000 characters of what went wrong', async () => {
    const done = await sentToEnd('notes', [{ payload: notification('x'.repeat(5000)) }]);
    expect(done.status).toBe('failed');
    expect(done.errorMessage).toHaveLength(1000);
    expect(done.errorMessage).toMatch(/^request\[0\]: the SAP gateway refused the record: HTTP 400: NotificationText is longer than 40 characters: x+…$/);
  });

  it('ends failed when the gateway refuses the credentials or cannot be reached', async () => {
    expect(await sentToEnd('notes-wrong', [{ payload: notification('x') }])).toMatchObject({ status: 'failed', errorMessage: expect.stringMatching(/refused the instance's credentials \(HTTP 401\)/) });
    expect(await sentToEnd('notes-dead', [{ payload: notification('x') }])).toMatchObject({ status: 'failed', errorMessage: expect.stringMatching(/could not be reached/) });
  });

  /**
   * A request as a process that died while sending it leaves it, `in_progress` with the records `left`, sent
   * to `endpointId`, with a job to send it again; the request once that job has ended.
   */
  async function sentAgain(left: unknown[], endpointId = 'notes', maxAttempts?: number) {
    const { db, jobs } = h.strata.services;
    const res = await send('notes-dead', [{ payload: notification('x') }]);
    await jobsDone(h);
    const { requestId } = res.body.items[0];
    const { id: projectId } = (await db.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!;
    await db.transaction(async (tx) => {
      await tx.run(
        sql`UPDATE sap_writeback_requests SET endpoint_id = ${endpointId}, status = 'in_progress', error_message = NULL, request = ${JSON.stringify(left)} WHERE request_id = ${requestId}`,
      );
      await jobs!.start(tx, { projectId: Number(projectId), kind: SEND_JOB, payload: { requestId }, maxAttempts });
    });
    await jobsDone(h);
    return (await h.post(`${WB}/requests/byids`, { items: [{ requestId }] })).body.items[0];
  }

  it('sent again after its process died sends only the records not yet sent', async () => {
    const received = sap.received.length;
    const left = [{ key: 'a', payload: notification('First'), sapObjectId: 'made-before', sent: true }, { key: 'b', payload: notification('Second') }];
    const again = await sentAgain(left);
    expect(sap.received.slice(received).map((r) => JSON.parse(r.body.toString()))).toEqual([notification('Second')]);
    expect(again).toMatchObject({ status: 'done', request: [{ key: 'a', sapObjectId: 'made-before' }, { key: 'b', sapObjectId: expect.any(String) }] });
    expect(again.request[0]).not.toHaveProperty('sent');
  });

  it('ends failed when its endpoint was deleted before it was sent, or when the server fails on its last attempt', async () => {
    expect(await sentAgain([{ payload: notification('x') }], 'deleted-endpoint')).toMatchObject({
      status: 'failed',
      errorMessage: 'the endpoint "deleted-endpoint" was deleted before the request was sent',
    });
    // A blob key the store refuses makes reading the attachment throw: the server's failure, not the gateway's.
    const broken = [{ fileId: 'f', payload: {}, file: { name: 'f', mimeType: 'text/plain', blobKey: '../escape' } }];
    expect(await sentAgain(broken, 'docs', 1)).toMatchObject({ status: 'failed', errorMessage: 'the request could not be sent: the server failed while sending it' });
  });

  it('goes through its endpoint\'s mapping: "input" sends the payload as it is, another sends what it makes', async () => {
    expect(await sentToEnd('notes-as-is', [{ payload: notification('As is') }])).toMatchObject({ status: 'done' });
    expect(JSON.parse(sap.received.at(-1)!.body.toString())).toEqual(notification('As is'));
    expect(await sentToEnd('notes-reshaped', [{ payload: { text: 'Reshaped' } }])).toMatchObject({ status: 'done', request: [{ payload: { text: 'Reshaped' } }] });
    expect(JSON.parse(sap.received.at(-1)!.body.toString())).toEqual({ NotificationText: 'Reshaped' });
  });

  /** Creates a file `externalId`, with `content` uploaded unless it is undefined. */
  async function file(externalId: string, content: Buffer | undefined, name = `${externalId}.pdf`) {
    const created = await h.post('/files', { externalId, name, mimeType: 'application/pdf' });
    expect(created.status).toBe(201);
    if (content === undefined) return;
    const { pathname, search } = new URL(created.body.uploadUrl);
    expect((await h.strata.app.inject({ method: 'PUT', url: pathname + search, payload: content, headers: { 'content-type': 'application/pdf' } })).statusCode).toBe(200);
  }

  it('to an attachment endpoint sends the file it names, described by its payload', async () => {
    const content = Buffer.from('%PDF-1.4 inspection report');
    await file('report', content, 'report 1.pdf');
    const done = await sentToEnd('docs', [{ fileId: 'report', payload: { BusinessObjectTypeName: 'PMQMEL', LinkedSAPObjectKey: '10000000' } }]);
    expect(done).toMatchObject({ status: 'done', request: [{ sapObjectId: expect.any(String) }] });
    const got = sap.received.at(-1)!;
    expect(got.path).toBe('/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV/AttachmentContentSet');
    expect(got.body.equals(content)).toBe(true);
    expect(got.headers).toMatchObject({ slug: 'report%201.pdf', 'content-type': 'application/pdf', businessobjecttypename: 'PMQMEL', linkedsapobjectkey: '10000000' });
  });

  it('to an attachment endpoint sends only a file the caller sees: another is refused as one that does not exist', async () => {
    const { body } = await h.post('/datasets', { items: [{ externalId: 'wb-elsewhere' }] });
    const write = capability('sapWritebackRequestsAcl', ['WRITE']);
    const callers = {
      elsewhere: bearer(await namedClientToken(h, 'wb-files-elsewhere', [write, capability('filesAcl', ['READ'], { datasetScope: { ids: [body.items[0].id] } })])),
      none: bearer(await namedClientToken(h, 'wb-no-files', [write])),
    };
    const before = (await h.get(`${WB}/requests`)).body.items.length;
    for (const headers of Object.values(callers)) {
      const res = await h.request('POST', `${WB}/requests`, { items: [{ endpointId: 'docs', request: [{ fileId: 'report', payload: {} }] }] }, headers);
      expect(errorMessage(res, 400)).toMatch(/items\[0\]\.request\[0\]\.fileId: the file "report" does not exist/);
    }
    expect((await h.get(`${WB}/requests`)).body.items).toHaveLength(before);
  });

  it('is refused, recording nothing: an unknown endpoint, broken limits, files where they do not belong', async () => {
    const before = (await h.get(`${WB}/requests`)).body.items.length;
    const received = sap.received.length;
    expect(errorMessage(await send('no-such', [{ payload: {} }]), 400)).toMatch(/items\[0\]\.endpointId: the SAP endpoint "no-such" does not exist/);
    expect(errorMessage(await h.post(`${WB}/requests`, { items: [{ endpointId: 'notes', request: [{ payload: {} }] }, { endpointId: 'notes', request: [{ payload: {} }] }] }), 400)).toMatch(/items/);
    expect(errorMessage(await send('notes', Array.from({ length: 101 }, () => ({ payload: {} }))), 400)).toMatch(/request/);
    expect(errorMessage(await send('notes', []), 400)).toMatch(/request/);
    expect(errorMessage(await send('notes', [{ payload: 'text' }]), 400)).toMatch(/payload/);
    expect(errorMessage(await send('notes', [{ key: 'k'.repeat(256), payload: {} }]), 400)).toMatch(/key/);
    expect(errorMessage(await send('notes', [{ payload: {}, fileId: 'report' }]), 400)).toMatch(/items\[0\]\.request\[0\]\.fileId: only requests to attachment endpoints send files/);
    expect(errorMessage(await send('docs', [{ payload: {} }]), 400)).toMatch(/items\[0\]\.request\[0\]\.fileId: a request to the attachment endpoint "docs" names the file it sends/);
    expect(errorMessage(await send('docs', [{ payload: {}, fileId: 'no-file' }]), 400)).toMatch(/items\[0\]\.request\[0\]\.fileId: the file "no-file" does not exist/);
    await file('empty', undefined);
    expect(errorMessage(await send('docs', [{ payload: {}, fileId: 'empty' }]), 400)).toMatch(/items\[0\]\.request\[0\]\.fileId: the file "empty" has no content yet/);
    await file('huge', Buffer.alloc(WRITEBACK_LIMITS.attachmentBytes + 1));
    expect(errorMessage(await send('docs', [{ payload: {}, fileId: 'huge' }]), 400)).toMatch(/has 26214401 bytes, more than the 26214400 an attachment may have/);
    expect(errorMessage(await send('docs', [{ payload: { 'Bad Name': 'x' }, fileId: 'report' }]), 400)).toMatch(/items\[0\]\.request\[0\]\.payload\["?Bad Name"?\]?.*not one/);
    expect(errorMessage(await send('docs', [{ payload: { LinkedSAPObjectKey: 10 }, fileId: 'report' }]), 400)).toMatch(/payload\.LinkedSAPObjectKey: .*expected text/);
    expect(errorMessage(await send('docs', [{ payload: { LinkedSAPObjectKey: 'a\nb' }, fileId: 'report' }]), 400)).toMatch(/payload\.LinkedSAPObjectKey/);
    expect(errorMessage(await h.post(`${WB}/requests/byids`, { items: [{ requestId: 'none' }] }), 400)).toMatch(/not found/);
    await jobsDone(h);
    expect((await h.get(`${WB}/requests`)).body.items).toHaveLength(before);
    expect(sap.received.length).toBe(received);
  });
});

describe('requests open at once', () => {
  beforeAll(async () => {
    await setUp('other');
  });

  it('are at most 50 per project: the 51st is a 429 that records nothing; another project is not held back', async () => {
    const before = (await h.get(`${WB}/requests`)).body.items.length;
    sap.hold = true;
    // 55 sent at once race for the 50 places: exactly 50 get one.
    const racing = await Promise.all(Array.from({ length: 55 }, (_, i) => send('notes', [{ key: `n${i}`, payload: notification(`Note ${i}`) }])));
    expect(racing.map((r) => r.status).sort()).toEqual([...Array(50).fill(200), ...Array(5).fill(429)]);
    const ids: string[] = racing.filter((r) => r.status === 200).map((r) => r.body.items[0].requestId);
    // All 50 are at the gateway together, each waiting for its answer.
    await sap.whenHeld(50);
    const inProgress = await h.post(`${WB}/requests/byids`, { items: ids.map((requestId) => ({ requestId })) });
    expect(inProgress.body.items.every((r: { status: string }) => r.status === 'in_progress')).toBe(true);

    const refused = await send('notes', [{ payload: notification('One too many') }]);
    expect(errorMessage(refused, 429)).toMatch(/already has 50 writeback requests pending or in progress/);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await h.get(`${WB}/requests`)).body.items).toHaveLength(before + 50);

    const elsewhere = await send('notes', [{ payload: notification('Other project') }], 'other');
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    await sap.whenHeld(51);

    sap.release();
    await jobsDone(h);
    const ended = await h.post(`${WB}/requests/byids`, { items: ids.map((requestId) => ({ requestId })) });
    expect(ended.body.items.map((r: { status: string }) => r.status)).toEqual(ids.map(() => 'done'));
    expect((await send('notes', [{ payload: notification('Room again') }])).status).toBe(200);
    await jobsDone(h);
  });
});
