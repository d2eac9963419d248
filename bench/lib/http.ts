/**
 * Two interchangeable HTTP/1.1 keep-alive clients for the load generator: `node:http` with a keep-alive agent,
 * and undici's dispatcher API (`dispatch` on an Agent with a handler: lighter per request than its `request`,
 * which wraps each body in a stream, and much lighter than `fetch`). The runner measures both against the bare route and uses the faster one, so the client is as small a
 * share of the measurement as it can be: it shares the machine's cores with the server.
 */
import http from 'node:http';
import { Agent } from 'undici';

export interface HttpResponse {
  status: number;
  body: Buffer;
}

export interface HttpClient {
  readonly kind: ClientKind;
  request(method: 'GET' | 'POST', url: string, body?: string, headers?: Record<string, string>): Promise<HttpResponse>;
  close(): void;
}

export const CLIENT_KINDS = ['node:http', 'undici'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

export function createClient(kind: ClientKind, maxSockets = 64): HttpClient {
  return kind === 'undici' ? undiciClient(maxSockets) : nodeHttpClient(maxSockets);
}

function nodeHttpClient(maxSockets: number): HttpClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' });
  return {
    kind: 'node:http',
    request(method, url, body, headers = {}) {
      return new Promise<HttpResponse>((resolve, reject) => {
        const h: Record<string, string | number> = { ...headers };
        if (body !== undefined) {
          h['content-type'] ??= 'application/json';
          h['content-length'] = Buffer.byteLength(body);
        }
        const req = http.request(url, { method, agent, headers: h }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.setTimeout(120_000, () => req.destroy(new Error(`timeout: ${method} ${url}`)));
        req.end(body);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

function undiciClient(maxSockets: number): HttpClient {
  const dispatcher = new Agent({ connections: maxSockets, pipelining: 1 });
  return {
    kind: 'undici',
    request(method, url, body, headers = {}) {
      const h: Record<string, string> = { ...headers };
      if (body !== undefined) h['content-type'] ??= 'application/json';
      // The origin ends where the path starts, after "http://".
      const slash = url.indexOf('/', 8);
      const origin = slash < 0 ? url : url.slice(0, slash);
      const path = slash < 0 ? '/' : url.slice(slash);
      return new Promise<HttpResponse>((resolve, reject) => {
        let status = 0;
        const chunks: Buffer[] = [];
        // A handler rather than `request()`: no body stream per response, about half the client's CPU per request.
        dispatcher.dispatch(
          { origin, path, method, headers: h, body, headersTimeout: 120_000, bodyTimeout: 120_000 },
          {
            // undici tells this handler API from its older one by onRequestStart.
            onRequestStart() {},
            onResponseStart(_controller, statusCode) {
              status = statusCode;
            },
            onResponseData(_controller, chunk) {
              chunks.push(chunk);
            },
            onResponseEnd() {
              resolve({ status, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
            },
            onResponseError(_controller, err) {
              reject(err);
            },
          },
        );
      });
    },
    close() {
      void dispatcher.destroy();
    },
  };
}

/** Throws with the response text when the status is not the expected one. */
export function expectStatus(res: HttpResponse, expected: number, what: string): HttpResponse {
  if (res.status !== expected) {
    throw new Error(`${what}: expected HTTP ${expected}, got ${res.status}: ${res.body.toString('utf8').slice(0, 500)}`);
  }
  return res;
}
