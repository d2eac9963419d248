/**
 * Request limits that keep one client from stalling the server for others: the nesting depth of JSON bodies
 * (plain and compressed), decoding that stops at the body limit, the small body limit of routes that need no
 * token, header and request timeouts (408), and the cap on connections per client address.
 */
import { sql } from '../src/storage/sql.js';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

/**
 * Generous, for a loaded machine: others wait milliseconds here, and a refusal takes what decoding the body
 * takes; without the limit the parser alone took about ten seconds on these bodies, with everyone waiting.
 */
const PROMPT_MS = 3000;
const ANSWERED_MS = 10_000;
const DEPTH_MESSAGE = /^The request body nests arrays and objects more than 64 levels deep; at most 64 levels are allowed$/;

const open: Harness[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

async function listening(env: Record<string, string> = {}): Promise<{ h: Harness; port: number }> {
  const h = await startHarness({}, env);
  open.push(h);
  await h.strata.app.listen({ host: '127.0.0.1', port: 0 });
  return { h, port: (h.strata.app.server.address() as { port: number }).port };
}

interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
}

/** One request over a real connection (`agent: false`: a connection of its own unless an agent is given). */
function send(port: number, req: Sent, agent: Agent | false = false): Promise<Response> {
  return new Promise((resolve, reject) => {
    const out = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.path, headers: req.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined });
      });
    });
    out.on('error', reject);
    out.end(req.body);
  });
}

/**
 * Sends `slow` on its own connection and, until it is answered, one request after another on a second
 * connection: how long `slow` took, and the longest the others waited.
 */
async function whileOthersAreServed(port: number, token: string, slow: Sent): Promise<{ answer: Response; took: number; longestWait: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const started = performance.now();
    let answered = false;
    const answer = send(port, slow).finally(() => (answered = true));
    let longestWait = 0;
    do {
      const at = performance.now();
      const other = await send(port, { method: 'GET', path: '/api/v1/projects/dev/events?limit=1', headers: { authorization: `Bearer ${token}` } }, agent);
      expect(other.status).toBe(200);
      longestWait = Math.max(longestWait, performance.now() - at);
    } while (!answered);
    return { answer: await answer, took: performance.now() - started, longestWait };
  } finally {
    agent.destroy();
  }
}

/** Arrays nested `depth` deep, with `inner` at the bottom. */
const nested = (depth: number, inner = '') => Buffer.from(`${'['.repeat(depth)}${inner}${']'.repeat(depth)}`);

describe('JSON nesting depth', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('refuses a body nested deeper than the limit with a 400 naming it, counting brackets outside strings only', async () => {
    const json = { 'content-type': 'application/json' };
    expect(errorMessage(await h.request('POST', '/events/list', nested(65), json), 400)).toMatch(DEPTH_MESSAGE);
    const deep = `{"filter": ${'{"and": ['.repeat(40)}{}${']}'.repeat(40)}}`;
    expect(errorMessage(await h.request('POST', '/events/list', deep, json), 400)).toMatch(DEPTH_MESSAGE);
    // At the limit the body is parsed (and refused by its schema, for other reasons).
    expect(errorMessage(await h.request('POST', '/events/list', nested(64), json), 400)).not.toMatch(DEPTH_MESSAGE);
    const bracketed = { items: [{ externalId: 'depth-brackets', description: `${'['.repeat(100)}"\\${'{'.repeat(100)}` }] };
    const created = await h.post('/events', bracketed);
    expect(created.status).toBe(201);
    expect(created.body.items[0].description).toBe(bracketed.items[0].description);
  });

  it('takes a limit from STRATA_JSON_MAX_DEPTH', async () => {
    const narrow = await startHarness({}, { STRATA_JSON_MAX_DEPTH: '8' });
    open.push(narrow);
    const json = { 'content-type': 'application/json' };
    expect(errorMessage(await narrow.request('POST', '/events/list', nested(9), json), 400)).toMatch(/more than 8 levels deep/);
    expect((await narrow.post('/events', { items: [{ externalId: 'shallow', metadata: { a: 'b' } }] })).status).toBe(201);
  });
});

describe('bodies built to stall the parser', () => {
  // Millions of brackets: seconds and hundreds of megabytes for JSON.parse; a few kilobytes gzip'd.
  const DEPTH = 4_000_000;

  it('a deeply nested gzip body, also with a lone surrogate escape inside, is a prompt 400 while others are served', async () => {
    const { h, port } = await listening();
    for (const inner of ['', '"\\ud800"']) {
      const body = gzipSync(nested(DEPTH, inner));
      expect(body.length).toBeLessThan(20_000);
      const headers = { authorization: `Bearer ${h.token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' };
      const run = await whileOthersAreServed(port, h.token, { method: 'POST', path: '/api/v1/projects/dev/events', headers, body });
      expect(errorMessage(run.answer, 400)).toMatch(DEPTH_MESSAGE);
      expect(run.took).toBeLessThan(ANSWERED_MS);
      expect(run.longestWait).toBeLessThan(PROMPT_MS);
    }
  });

  it('a deeply nested plain body is a prompt 400 while others are served', async () => {
    const { h, port } = await listening();
    const headers = { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' };
    const run = await whileOthersAreServed(port, h.token, { method: 'POST', path: '/api/v1/projects/dev/events/list', headers, body: nested(DEPTH) });
    expect(errorMessage(run.answer, 400)).toMatch(DEPTH_MESSAGE);
    expect(run.took).toBeLessThan(ANSWERED_MS);
    expect(run.longestWait).toBeLessThan(PROMPT_MS);
  });

  it('a compressed body is decoded no further than the body limit', async () => {
    const h = await startHarness();
    open.push(h);
    // 256 gzip members of 16 MiB of zeros each: 4 GiB decoded from 4 MiB, which would take seconds of CPU to inflate.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    let pulled = 0;
    const bomb = Readable.from(
      (function* () {
        for (let i = 0; i < 256; i++) {
          pulled++;
          yield member;
        }
      })(),
    );
    const cpu = process.cpuUsage();
    const res = await h.strata.app.inject({
      method: 'POST',
      url: `${h.base}/events`,
      headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json', 'content-encoding': 'gzip', 'transfer-encoding': 'chunked' },
      payload: bomb,
    });
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().error.message).toBe('The request body is larger than the limit of 20971520 bytes');
    // The rest of the body is still read (and dropped), so its end is a point to measure at.
    if (pulled < 256 || !bomb.readableEnded) await once(bomb, 'end');
    const used = process.cpuUsage(cpu);
    expect((used.user + used.system) / 1000).toBeLessThan(2000);
  });
});

describe('routes that need no token', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const limited = /^The request body is larger than the limit of 8192 bytes$/;
  const json = { 'content-type': 'application/json' };
  /** A request as a client without a token sends it. */
  const anonymous = async (url: string, payload: string | Buffer, headers: Record<string, string>): Promise<Response> => {
    const res = await h.strata.app.inject({ method: 'POST', url, payload, headers });
    return { status: res.statusCode, headers: res.headers, body: res.json() };
  };
  const session = '/api/v1/projects/dev/sessions/token';

  it('refuse a body over their small limit with 413, plain or compressed', async () => {
    const big = JSON.stringify({ nonce: 'n'.repeat(9000) });
    expect(errorMessage(await anonymous(session, big, json), 413)).toMatch(limited);
    // A million brackets in 2 KB: refused at 8 KB decoded.
    const bomb = gzipSync(nested(1_000_000));
    expect(bomb.length).toBeLessThan(8192);
    expect(errorMessage(await anonymous(session, bomb, { ...json, 'content-encoding': 'gzip' }), 413)).toMatch(limited);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'x', client_secret: 's'.repeat(9000) }).toString();
    expect(errorMessage(await anonymous('/oauth2/token', form, { 'content-type': 'application/x-www-form-urlencoded' }), 413)).toMatch(limited);
  });

  it('take bodies within it', async () => {
    const res = await anonymous(session, JSON.stringify({ nonce: 'n'.repeat(4096) }), json);
    expect(res.status).not.toBe(413);
    expect(res.status).toBeLessThan(500);
  });

  it('project operations keep the full body limit once the token is checked', async () => {
    const items = [{ externalId: 'big-body', description: 'd'.repeat(100), metadata: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'.repeat(1000)])) }];
    expect((await h.post('/events', { items })).status).toBe(201);
  });
});

/** A raw connection, with everything it receives until the server closes it. */
function rawConnection(port: number, localAddress = '127.0.0.1'): { socket: Socket; received: Promise<string> } {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const received = new Promise<string>((resolve, reject) => {
    socket.on('close', () => resolve(text));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(text) : reject(err)));
  });
  return { socket, received };
}

function parseRaw(raw: string): Response {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const headers = Object.fromEntries(
    head
      .split('\r\n')
      .slice(1)
      .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(head.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) };
}

describe('timeouts', () => {
  const TIMEOUT_MS = 300;

  it('cut a request whose body comes too slowly with a 408 in the error shape, and close its connection', async () => {
    const { h, port } = await listening({ STRATA_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), STRATA_HEADERS_TIMEOUT_MS: String(TIMEOUT_MS) });
    const { socket, received } = rawConnection(port);
    socket.write(
      `POST /api/v1/projects/dev/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"items": [`,
    );
    const text = await received;
    // Written to the socket without a route, and still ending with a newline as every JSON answer does.
    expect(text.endsWith('}\n')).toBe(true);
    const res = parseRaw(text);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(errorMessage(res, 408)).toBe('The request was not received in time: its headers must arrive within 0.3 s, all of it within 0.3 s');
    expect(await eventCount(h)).toBe(0);
  });

  it('cut a request whose headers come too slowly, with or without a token', async () => {
    const { port } = await listening({ STRATA_REQUEST_TIMEOUT_MS: '60000', STRATA_HEADERS_TIMEOUT_MS: String(TIMEOUT_MS) });
    const { socket, received } = rawConnection(port);
    socket.write('POST /oauth2/token HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect(errorMessage(parseRaw(await received), 408)).toMatch(/headers must arrive within 0\.3 s, all of it within 60 s/);
  });
});

async function eventCount(h: Harness): Promise<number> {
  return (await h.strata.services.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM events`))!.n;
}

describe('connections per client address', () => {
  it('refuses a connection over the cap with a 429, and keeps serving the others and other addresses', async () => {
    const { h, port } = await listening({ STRATA_MAX_CONNECTIONS_PER_ADDRESS: '2' });
    const closedOnServer: Array<Promise<unknown>> = [];
    h.strata.app.server.on('connection', (s: Socket) => closedOnServer.push(once(s, 'close')));
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    const get = () => send(port, { method: 'GET', path: '/api/v1/projects/dev/events?limit=1', headers: { authorization: `Bearer ${h.token}` } }, agent);
    try {
      // Two connections held open by the agent.
      expect((await Promise.all([get(), get()])).map((r) => r.status)).toEqual([200, 200]);
      const third = rawConnection(port);
      third.socket.write(`GET /api/v1/projects/dev/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.token}\r\nConnection: close\r\n\r\n`);
      const refused = parseRaw(await third.received);
      expect(errorMessage(refused, 429)).toBe('Too many connections from 127.0.0.1: at most 2 may be open at once; reuse connections or retry after 1 s');
      expect(refused.headers['retry-after']).toBe('1');
      // The connections already open are served as before, and another address is not affected.
      expect((await get()).status).toBe(200);
      const elsewhere = rawConnection(port, '127.0.0.2');
      elsewhere.socket.write(`GET /api/v1/projects/dev/events?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.token}\r\nConnection: close\r\n\r\n`);
      expect(parseRaw(await elsewhere.received).status).toBe(200);
      // Once a connection closes, its place is free again.
      agent.destroy();
      await Promise.all(closedOnServer);
      const again = rawConnection(port);
      again.socket.write(`GET /api/v1/projects/dev/events?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.token}\r\nConnection: close\r\n\r\n`);
      expect(parseRaw(await again.received).status).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});

describe('request limit settings', () => {
  it('have stated defaults, and take flags', () => {
    const d = loadConfig([], {});
    expect(d).toMatchObject({
      unauthenticatedBodyLimit: 8192,
      jsonMaxDepth: 64,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      maxConnectionsPerAddress: 256,
    });
    const set = loadConfig(
      ['--unauthenticated-body-limit', '4096', '--json-max-depth', '100', '--headers-timeout', '5000', '--request-timeout', '60000', '--max-connections-per-address', '0'],
      {},
    );
    expect(set).toMatchObject({ unauthenticatedBodyLimit: 4096, jsonMaxDepth: 100, headersTimeoutMs: 5000, requestTimeoutMs: 60_000, maxConnectionsPerAddress: 0 });
    // The headers' timeout follows a shorter request timeout.
    expect(loadConfig(['--request-timeout', '2000'], {}).headersTimeoutMs).toBe(2000);
  });

  it('refuse nonsense at start-up, naming the setting', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ STRATA_UNAUTHENTICATED_BODY_LIMIT: '10' }, /^STRATA_UNAUTHENTICATED_BODY_LIMIT \(--unauthenticated-body-limit\) must be a whole number from 1024 to 1048576, got "10"/],
      [{ STRATA_JSON_MAX_DEPTH: 'deep' }, /^STRATA_JSON_MAX_DEPTH \(--json-max-depth\) must be a whole number from 8 to 1000/],
      [{ STRATA_JSON_MAX_DEPTH: '100000' }, /^STRATA_JSON_MAX_DEPTH/],
      [{ STRATA_REQUEST_TIMEOUT_MS: '0' }, /^STRATA_REQUEST_TIMEOUT_MS \(--request-timeout\) must be a whole number from 50 to 3600000, got "0"/],
      [{ STRATA_HEADERS_TIMEOUT_MS: '1.5' }, /^STRATA_HEADERS_TIMEOUT_MS \(--headers-timeout\) must be a whole number/],
      [{ STRATA_HEADERS_TIMEOUT_MS: '40000' }, /^STRATA_HEADERS_TIMEOUT_MS \(--headers-timeout\) must not be longer than STRATA_REQUEST_TIMEOUT_MS \(--request-timeout\): 40000 > 30000/],
      [{ STRATA_MAX_CONNECTIONS_PER_ADDRESS: '-1' }, /^STRATA_MAX_CONNECTIONS_PER_ADDRESS \(--max-connections-per-address\) must be a whole number from 0/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig([], env), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig([], env), JSON.stringify(env)).toThrow(message);
    }
  });
});
