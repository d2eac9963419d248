/**
 * A small but real OpenID Connect issuer for tests, on a loopback port: a discovery document, a JWKS that
 * can rotate, a token endpoint for client credentials and for the authorization code grant with PKCE (its
 * authorization endpoint signs a known client in at once), and signing of arbitrary tokens with RS256, ES256 or
 * PS256 keys. It counts JWKS fetches so tests can check how often Strata asks.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';

export type Alg = 'RS256' | 'ES256' | 'PS256';

export interface IssuerKey {
  kid: string;
  alg: Alg;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface TestClient {
  secret: string;
  groups: string[];
}

export interface TestIssuer {
  issuer: string;
  audience: string;
  jwksUrl: string;
  tokenUrl: string;
  /** Keys currently published in the JWKS. */
  keys: IssuerKey[];
  jwksFetches: number;
  clients: Map<string, TestClient>;
  newKey(alg?: Alg, kid?: string): Promise<IssuerKey>;
  /** Publishes a new key (and keeps the old ones unless `replace`). */
  rotate(alg?: Alg, replace?: boolean): Promise<IssuerKey>;
  sign(claims: Record<string, unknown>, opts?: SignOptions): Promise<string>;
  close(): Promise<void>;
}

export interface SignOptions {
  key?: IssuerKey;
  /** Override the header's key id (for example to a key that is not published). */
  kid?: string;
  issuer?: string;
  audience?: string;
  expiresIn?: number;
  notBefore?: number;
}

/**
 * The setting a Strata needs to call an issuer on a loopback port: by default the outbound address policy
 * refuses loopback addresses.
 */
export const LOOPBACK_PROVIDERS = { STRATA_OUTBOUND_ALLOW: 'loopback' };

let counter = 0;

export async function startTestIssuer(audience = 'https://strata.test/api'): Promise<TestIssuer> {
  let server: Server | undefined;
  const state = {
    keys: [] as IssuerKey[],
    jwksFetches: 0,
    clients: new Map<string, TestClient>(),
  };

  async function newKey(alg: Alg = 'RS256', kid = `key-${++counter}`): Promise<IssuerKey> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    return { kid, alg, privateKey, publicJwk };
  }

  // Codes of the authorization code grant: what each was issued for.
  const codes = new Map<string, { clientId: string; redirectUri: string; challenge: string }>();

  server = createServer((req, res) => {
    // A browser app (the web console) reads the discovery document and calls the token endpoint from its origin.
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
      res.end(JSON.stringify(body));
    };
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/.well-known/openid-configuration') {
      return send(200, {
        issuer: api.issuer,
        jwks_uri: api.jwksUrl,
        token_endpoint: api.tokenUrl,
        authorization_endpoint: `${api.issuer}/authorize`,
        grant_types_supported: ['client_credentials', 'authorization_code'],
      });
    }
    // The authorization code grant with PKCE, signing in at once (no page): a known client is sent back with a code.
    if (req.method === 'GET' && url.startsWith('/authorize?')) {
      const q = new URL(url, api.issuer).searchParams;
      const clientId = q.get('client_id') ?? '';
      const redirectUri = q.get('redirect_uri') ?? '';
      if (!state.clients.has(clientId) || q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !redirectUri) return send(400, { error: 'invalid_request' });
      const code = randomBytes(16).toString('hex');
      codes.set(code, { clientId, redirectUri, challenge: q.get('code_challenge') ?? '' });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (req.method === 'GET' && url === '/keys') {
      state.jwksFetches++;
      return send(200, { keys: state.keys.map((k) => k.publicJwk) });
    }
    if (req.method === 'POST' && url === '/token') {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        const client = state.clients.get(form.get('client_id') ?? '');
        if (form.get('grant_type') === 'authorization_code') {
          const issued = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          const verifier = form.get('code_verifier') ?? '';
          const proof = createHash('sha256').update(verifier).digest('base64url');
          if (!issued || !client || issued.clientId !== form.get('client_id') || issued.redirectUri !== form.get('redirect_uri') || issued.challenge !== proof) {
            return send(400, { error: 'invalid_grant', error_description: 'the code, its client, redirect URI or verifier do not match' });
          }
          void api
            .sign({ sub: `user-of-${issued.clientId}`, name: 'Test User', groups: client.groups })
            .then((token) => send(200, { access_token: token, token_type: 'Bearer', expires_in: 600 }));
          return;
        }
        if (form.get('grant_type') !== 'client_credentials') return send(400, { error: 'unsupported_grant_type' });
        if (!client || client.secret !== form.get('client_secret')) return send(401, { error: 'invalid_client', error_description: 'bad credentials' });
        void api
          .sign({ sub: form.get('client_id'), azp: form.get('client_id'), groups: client.groups })
          .then((token) => send(200, { access_token: token, token_type: 'Bearer', expires_in: 600 }));
      });
      return;
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const api: TestIssuer = {
    issuer: origin,
    audience,
    jwksUrl: `${origin}/keys`,
    tokenUrl: `${origin}/token`,
    get keys() {
      return state.keys;
    },
    set keys(k: IssuerKey[]) {
      state.keys = k;
    },
    get jwksFetches() {
      return state.jwksFetches;
    },
    set jwksFetches(n: number) {
      state.jwksFetches = n;
    },
    clients: state.clients,
    newKey,
    async rotate(alg = 'RS256', replace = false) {
      const key = await newKey(alg);
      state.keys = replace ? [key] : [...state.keys, key];
      return key;
    },
    async sign(claims, opts = {}) {
      const key = opts.key ?? state.keys[0];
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: key.alg, kid: opts.kid ?? key.kid, typ: 'JWT' })
        .setIssuer(opts.issuer ?? origin)
        .setAudience(opts.audience ?? audience)
        .setIssuedAt(now - 5)
        .setNotBefore(opts.notBefore ?? now - 5)
        .setExpirationTime(now + (opts.expiresIn ?? 600))
        .sign(key.privateKey);
    },
    close: () => new Promise<void>((resolve) => server!.close(() => resolve())),
  };
  await api.rotate('RS256');
  return api;
}

/** The `oidcConfiguration` that makes a project trust the issuer's tokens, its `groups` claim naming their groups. */
export function trustedIssuer(issuer: TestIssuer): Record<string, unknown> {
  return { issuer: issuer.issuer, audience: issuer.audience, accessClaims: [{ claimName: 'groups' }], scopeClaims: [], logClaims: [] };
}
