/**
 * A small SAP gateway for tests, on a loopback port, answering as SAP's OData version 2 services do: the
 * maintenance notification and attachment services, behind basic authentication, with a CSRF token that a
 * GET with `x-csrf-token: Fetch` hands out (bound to the session cookie it sets) and that every POST must
 * carry. A notification needs a `NotificationText` of at most 40 characters; a created record is answered 201 with its key in the
 * `Location` header. With `hold` set, POSTs are held open until `release()`, so a test sees how many are
 * under way at once without sleeping.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const NOTIFICATIONS = '/sap/opu/odata/sap/API_MAINTNOTIFICATION/';
const ATTACHMENTS = '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV/';

export interface Received {
  path: string;
  client: string | null;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface SapGateway {
  url: string;
  /** The records created, in order. */
  received: Received[];
  /** Token fetches answered. */
  tokenFetches: number;
  /** POSTs are held until released. */
  hold: boolean;
  /** POSTs held now. */
  readonly held: number;
  /** Resolves once `n` POSTs are held. */
  whenHeld(n: number): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

export const SAP_USER = 'writer';
export const SAP_PASSWORD = 'secret-sap-password';

export async function startSapGateway(): Promise<SapGateway> {
  const sessions = new Map<string, string>();
  const heldResponses: Array<() => void> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let next = 10000000;

  const odataError = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { code: 'SY/530', message: { lang: 'en', value: message } } }));
  };

  function created(req: IncomingMessage, res: ServerResponse, body: Buffer, url: URL) {
    const notification = url.pathname.startsWith(NOTIFICATIONS);
    if (notification) {
      const payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      if (typeof payload.NotificationText !== 'string') return odataError(res, 400, 'Property NotificationText is required');
      if (payload.NotificationText.length > 40) return odataError(res, 400, `NotificationText is longer than 40 characters: ${payload.NotificationText}`);
    }
    const key = String(next++);
    gateway.received.push({ path: url.pathname, client: url.searchParams.get('sap-client'), headers: req.headers, body });
    const set = notification ? 'MaintenanceNotification' : 'AttachmentContentSet';
    res.writeHead(201, { 'content-type': 'application/json', location: `${url.origin}${url.pathname.replace(/\/[^/]*$/, '')}/${set}('${key}')` });
    res.end(JSON.stringify({ d: notification ? { MaintenanceNotification: key } : { DocumentInfoRecordDocNumber: key } }));
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', gateway.url);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!url.pathname.startsWith(NOTIFICATIONS) && !url.pathname.startsWith(ATTACHMENTS)) return odataError(res, 404, 'No service found');
      if (req.headers.authorization !== `Basic ${Buffer.from(`${SAP_USER}:${SAP_PASSWORD}`).toString('base64')}`) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="SAP NetWeaver Application Server"' });
        return res.end('Logon failed');
      }
      if (req.method === 'GET') {
        if (req.headers['x-csrf-token'] !== 'Fetch') return odataError(res, 400, 'Expected a token fetch');
        const session = randomUUID();
        const token = randomUUID();
        sessions.set(session, token);
        gateway.tokenFetches++;
        res.writeHead(200, { 'content-type': 'application/json', 'x-csrf-token': token, 'set-cookie': [`SAP_SESSIONID=${session}; path=/; HttpOnly`, 'sap-usercontext=sap-client=100; path=/'] });
        return res.end(JSON.stringify({ d: { EntitySets: ['MaintenanceNotification', 'AttachmentContentSet'] } }));
      }
      const session = /SAP_SESSIONID=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      if (!session || sessions.get(session) !== req.headers['x-csrf-token']) return odataError(res, 403, 'CSRF token validation failed', { 'x-csrf-token': 'Required' });
      const body = Buffer.concat(chunks);
      if (!gateway.hold) return created(req, res, body, url);
      heldResponses.push(() => created(req, res, body, url));
      for (const w of waiters.filter((w) => heldResponses.length >= w.n)) w.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const gateway: SapGateway = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: [],
    tokenFetches: 0,
    hold: false,
    get held() {
      return heldResponses.length;
    },
    whenHeld: (n) => (heldResponses.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    release() {
      gateway.hold = false;
      for (const respond of heldResponses.splice(0)) respond();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return gateway;
}
