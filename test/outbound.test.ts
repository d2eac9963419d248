/**
 * Calls to identity providers go through the one outbound client: a deadline for the whole answer, a size
 * limit, no redirects, http(s) only, the address policy checked on the address connected to, discovered
 * endpoints on the issuer's origin, and messages that neither tell a closed port from a silent one nor
 * repeat what the remote server said. The providers here are hostile servers started by the test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKind } from '../src/http/address-policy.js';
import { createOutboundClient, OutboundError } from '../src/http/outbound.js';
import { loadConfig } from '../src/config.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { LOOPBACK_PROVIDERS } from './support/oidc-issuer.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Provider {
  origin: string;
  /** Connections accepted so far. */
  connections: number;
  /** The sockets accepted, for tests that wait until Strata gives up on one. */
  sockets: Socket[];
  handle: Handler;
  close(): Promise<void>;
}

async function startProvider(handle: Handler = () => {}): Promise<Provider> {
  const server: Server = createServer((req, res) => provider.handle(req, res));
  const provider: Provider = {
    origin: '',
    connections: 0,
    sockets: [],
    handle,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket: Socket) => {
    provider.connections++;
    provider.sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  provider.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return provider;
}

const DISCOVERY = '/.well-known/openid-configuration';
const claims = { accessClaims: [{ claimName: 'groups' }], scopeClaims: [], logClaims: [] };
const DEADLINE_MS = 1000;
const MAX_BYTES = 65536;

/** A provider answering its discovery document (with `over` applied) and an empty key set. */
function wellBehaved(p: Provider, over: Record<string, unknown> = {}): Handler {
  return (req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === DISCOVERY) return res.end(JSON.stringify({ issuer: p.origin, jwks_uri: `${p.origin}/keys`, token_endpoint: `${p.origin}/token`, ...over }));
    if (req.url === '/keys') return res.end('{"keys": []}');
    res.statusCode = 404;
    res.end('{}');
  };
}

let h: Harness;
let provider: Provider;

beforeAll(async () => {
  h = await startHarness(
    {},
    { ...LOOPBACK_PROVIDERS, STRATA_OUTBOUND_DEADLINE_MS: String(DEADLINE_MS), STRATA_OUTBOUND_MAX_BYTES: String(MAX_BYTES), STRATA_PROJECTS: 'dev' },
  );
  provider = await startProvider();
});
afterAll(async () => {
  await h.close();
  await provider.close();
});

function configure(harness: Harness, issuer: string, project = 'dev') {
  return harness.request('POST', `/api/v1/projects/${project}/update`, { update: { oidcConfiguration: { set: { issuer, audience: 'strata', ...claims } } } });
}

async function refusal(harness: Harness, issuer: string, project = 'dev'): Promise<string> {
  const message = errorMessage(await configure(harness, issuer, project), 400);
  // Nothing was stored: the project still accepts the built-in provider's tokens.
  expect((await harness.get(`/api/v1/projects/${project}`)).body.oidcConfiguration.issuer).toBe('http://localhost:4000');
  return message;
}

describe('the deadline and the size limit', () => {
  it('cuts a discovery document whose body dribbles in at the deadline', async () => {
    provider.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"issuer": ');
      const drip = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(drip));
    };
    const started = Date.now();
    const message = await refusal(h, provider.origin);
    expect(message).toMatch(/could not be fetched: the server could not be reached, or did not answer completely within 1000 ms/);
    // Generous: the rule is about time, but the machine is shared.
    expect(Date.now() - started).toBeLessThan(DEADLINE_MS + 9000);
    // Strata closed the connection: the provider's sockets all close.
    await Promise.all(provider.sockets.map((s) => (s.destroyed ? undefined : new Promise((resolve) => s.on('close', resolve)))));
  });

  it('stops reading an endless discovery document at the size limit', async () => {
    let written = 0;
    provider.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(16384, ' ');
      const pour = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
      };
      res.on('drain', pour);
      pour();
    };
    expect(await refusal(h, provider.origin)).toMatch(new RegExp(`answered with more than ${MAX_BYTES} bytes, the limit`));
    // The server stops only because Strata closed the connection; socket buffers hold a few megabytes at most.
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a body whose declared length is above the limit without waiting for it', async () => {
    provider.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(400 * 1024 * 1024) });
      res.write('{"issuer": ');
    };
    expect(await refusal(h, provider.origin)).toMatch(/answered with more than 65536 bytes/);
  });
});

describe('what is called', () => {
  it('does not follow a redirect', async () => {
    const target = await startProvider();
    try {
      target.handle = wellBehaved(target);
      provider.handle = (_req, res) => {
        res.writeHead(302, { location: `${target.origin}${DISCOVERY}` });
        res.end();
      };
      expect(await refusal(h, provider.origin)).toMatch(/answered with a redirect \(HTTP 302\), which is not followed/);
      expect(target.connections).toBe(0);
    } finally {
      await target.close();
    }
  });

  it('refuses key set URLs that are not http(s), not on the issuer\'s origin, or on a link-local address', async () => {
    for (const jwks of ['data:application/json,{"keys":[]}', 'file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO']) {
      provider.handle = wellBehaved(provider, { jwks_uri: jwks });
      expect(await refusal(h, provider.origin)).toMatch(/has a "jwks_uri" that is not an http or https URL$/);
    }
    const other = await startProvider();
    try {
      provider.handle = wellBehaved(provider, { jwks_uri: `${other.origin}/keys` });
      expect(await refusal(h, provider.origin)).toMatch(new RegExp(`has a "jwks_uri" that is not on the issuer's origin ${provider.origin}`));
      provider.handle = wellBehaved(provider, { token_endpoint: 'http://169.254.169.254/token' });
      expect(await refusal(h, provider.origin)).toMatch(/has a "token_endpoint" that is not on the issuer's origin/);
      expect(other.connections).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('allows endpoints on origins the operator lists, and still refuses link-local and metadata addresses there', async () => {
    const keys = await startProvider();
    const open = await startHarness({}, { ...LOOPBACK_PROVIDERS, STRATA_OIDC_EXTRA_ORIGINS: `${keys.origin},http://169.254.169.254,http://[fd00:ec2::254]`, STRATA_PROJECTS: 'ext' });
    try {
      keys.handle = wellBehaved(keys);
      for (const jwks of ['http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/latest/meta-data/']) {
        provider.handle = wellBehaved(provider, { jwks_uri: jwks });
        expect(await refusal(open, provider.origin, 'ext')).toMatch(/jwksUrl: the identity provider's key set \(JWKS\) \(.*\) was not called: the address of .* is not one this server may call/);
      }
      provider.handle = wellBehaved(provider, { jwks_uri: `${keys.origin}/keys` });
      const accepted = await configure(open, provider.origin, 'ext');
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      expect(accepted.body.oidcConfiguration.jwksUrl).toBe(`${keys.origin}/keys`);
    } finally {
      await open.close();
      await keys.close();
    }
  });

  it('refuses loopback issuers, by address or by name, unless the operator allows them', async () => {
    const strict = await startHarness({}, { STRATA_PROJECTS: 'dev' });
    try {
      provider.handle = wellBehaved(provider);
      const before = provider.connections;
      const port = new URL(provider.origin).port;
      for (const issuer of [provider.origin, `http://localhost:${port}`, `http://[::ffff:127.0.0.1]:${port}`, 'http://169.254.169.254']) {
        expect(await refusal(strict, issuer)).toMatch(/was not called: the address of .* is not one this server may call \(outbound address policy\)/);
      }
      expect(provider.connections).toBe(before);
    } finally {
      await strict.close();
    }
  });
});

describe('messages', () => {
  it('read the same for a closed port, a server that never answers and a name that does not resolve', async () => {
    const closed = await startProvider();
    const closedOrigin = closed.origin;
    await closed.close();
    provider.handle = () => {};
    const messages = [
      (await refusal(h, closedOrigin)).replace(closedOrigin, 'ISSUER'),
      (await refusal(h, provider.origin)).replace(provider.origin, 'ISSUER'),
      (await refusal(h, 'http://strata-test.invalid')).replace('http://strata-test.invalid', 'ISSUER'),
    ];
    expect(messages[0]).toMatch(/could not be fetched/);
    expect(new Set(messages).size).toBe(1);
  });

  it('never repeat what the remote server answered', async () => {
    const answers: Handler[] = [
      (_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error": "SECRET internal detail"}'),
      (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('SECRET not json'),
      (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"issuer": "SECRET issuer", "jwks_uri": "SECRET"}'),
      (req, res) => (req.url === DISCOVERY ? wellBehaved(provider, { jwks_uri: `${provider.origin}/SECRET-path` })(req, res) : res.writeHead(200).end('{"keys": "SECRET"}')),
      (req, res) => (req.url === DISCOVERY ? wellBehaved(provider)(req, res) : res.writeHead(404).end('SECRET 404 page')),
    ];
    for (const answer of answers) {
      provider.handle = answer;
      const message = await refusal(h, provider.origin);
      expect(message.replace('SECRET-path', '')).not.toMatch(/SECRET/);
    }
  });
});

describe('the outbound client', () => {
  const allowLoopback = { allow: ['loopback' as const], deadlineMs: DEADLINE_MS, maxBytes: MAX_BYTES };

  it('connects to the address it checked, not to a second answer of the name', async () => {
    provider.handle = wellBehaved(provider);
    const port = new URL(provider.origin).port;
    const answers: Record<string, string[]> = {
      'checked.test': ['127.0.0.1'],
      'mixed.test': ['169.254.169.254', '127.0.0.1'],
      'metadata.test': ['169.254.169.254'],
    };
    let resolved = 0;
    const client = createOutboundClient(allowLoopback, async (name) => {
      resolved++;
      return answers[name] ?? [];
    });
    try {
      // The names exist only in this resolver: the call reaches the provider only through the checked address.
      expect(await client.getJson(`http://checked.test:${port}${DISCOVERY}`, 'the document')).toMatchObject({ issuer: provider.origin });
      expect(await client.getJson(`http://mixed.test:${port}${DISCOVERY}`, 'the document')).toMatchObject({ issuer: provider.origin });
      const before = provider.connections;
      const refused = await client.getJson(`http://metadata.test:${port}${DISCOVERY}`, 'the document').catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(OutboundError);
      expect((refused as OutboundError).failure).toBe('address');
      expect(provider.connections).toBe(before);
      expect(resolved).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('classifies addresses, including IPv4 inside IPv6', () => {
    const kinds: Record<string, string> = {
      '8.8.8.8': 'public',
      '2001:4860:4860::8888': 'public',
      '169.254.169.254': 'forbidden',
      '::ffff:169.254.169.254': 'forbidden',
      '64:ff9b::a9fe:a9fe': 'forbidden',
      '64:ff9b::808:808': 'public',
      'fe80::1': 'forbidden',
      'fd00:ec2::254': 'forbidden',
      '100.100.100.200': 'forbidden',
      '0.0.0.0': 'forbidden',
      '::': 'forbidden',
      '224.0.0.1': 'forbidden',
      '127.0.0.1': 'loopback',
      '127.1.2.3': 'loopback',
      '::1': 'loopback',
      '::ffff:127.0.0.1': 'loopback',
      '10.1.2.3': 'private',
      '172.31.255.255': 'private',
      '172.32.0.0': 'public',
      '192.168.1.1': 'private',
      '100.64.0.1': 'private',
      'fd12:3456::1': 'private',
    };
    expect(Object.fromEntries(Object.keys(kinds).map((a) => [a, addressKind(a)]))).toEqual(kinds);
  });

  it('is configured by validated settings', () => {
    const config = loadConfig([], { STRATA_OUTBOUND_ALLOW: 'private, loopback', STRATA_OUTBOUND_DEADLINE_MS: '2000', STRATA_OIDC_EXTRA_ORIGINS: 'https://keys.example.com/' });
    expect(config.outbound).toEqual({ allow: ['private', 'loopback'], deadlineMs: 2000, maxBytes: 1048576 });
    expect(config.oidcExtraOrigins).toEqual(['https://keys.example.com']);
    expect(loadConfig([], {}).outbound).toEqual({ allow: [], deadlineMs: 5000, maxBytes: 1048576 });
    expect(loadConfig(['--oidc-extra-origins', '*'], {}).oidcExtraOrigins).toBe('*');
    expect(() => loadConfig([], { STRATA_OUTBOUND_ALLOW: 'link-local' })).toThrow(/STRATA_OUTBOUND_ALLOW \(--outbound-allow\): unknown address kind "link-local"/);
    expect(() => loadConfig([], { STRATA_OUTBOUND_MAX_BYTES: '0' })).toThrow(/STRATA_OUTBOUND_MAX_BYTES/);
    expect(() => loadConfig([], { STRATA_OIDC_EXTRA_ORIGINS: 'https://keys.example.com/path' })).toThrow(/is not an origin/);
  });
});
