/**
 * The built-in OpenID Connect identity provider: discovery document, JWKS and a client-credentials token
 * endpoint, on the server's own origin. Its signing key and the dev client's secret are kept in the database
 * (`server_meta`), so tokens stay valid across restarts and every process on the database signs and accepts
 * the same tokens. Besides the administrator it serves the configured extra clients, whose tokens carry a
 * `groups` claim, and it signs the access tokens of sessions.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { BuiltInClientConfig } from '../config.js';
import { sharedValue } from '../storage/projects.js';
import type { Queryable } from '../storage/store.js';

export const DEV_CLIENT_ID = 'strata-admin';
export const TOKEN_LIFETIME_SECONDS = 3600;
/** The claim in which built-in tokens carry their client's groups (the default access claim of dev projects). */
export const GROUPS_CLAIM = 'groups';

export interface IdentityProviderOptions {
  db: Queryable;
  /** Where an earlier build kept the key and secret in files; they move into the database once. */
  dataDir: string;
  issuer: string;
  audience: string;
  devClientSecret?: string;
  extraClients?: readonly BuiltInClientConfig[];
  /** The clock tokens are issued by: the one the app verifies them with. */
  now?: () => number;
}

export interface BuiltInClient {
  clientId: string;
  secret: string;
  /** Values of the `groups` claim in this client's tokens. */
  groups?: readonly string[];
}

/** A token the provider signs on Strata's behalf (session access tokens). */
export interface SignRequest {
  subject: string;
  audience: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
  claims: Record<string, unknown>;
}

export interface IdentityProvider {
  issuer: string;
  audience: string;
  devClient: BuiltInClient;
  jwks: { keys: JWK[] };
  discovery(): Record<string, unknown>;
  /** Returns the client when id and secret match a configured client. */
  authenticate(clientId: string, secret: string): BuiltInClient | undefined;
  /**
   * A token for a client. Every claim comes from the client's configuration, none from the request (a
   * requested `scope` is not echoed): a project may name any claim as an access claim, and a claim the
   * requester chose would let it pick its own groups.
   */
  issueToken(client: BuiltInClient): Promise<{ access_token: string; token_type: 'Bearer'; expires_in: number }>;
  sign(request: SignRequest): Promise<string>;
}

interface StoredKey {
  privateJwk: JWK;
}

/** A file an earlier build kept in the data directory, if there is one. */
function legacyFile(dataDir: string, name: string): string | undefined {
  const file = dataDir === ':memory:' ? undefined : join(dataDir, name);
  return file && existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

async function loadOrCreateKey(db: Queryable, dataDir: string): Promise<JWK> {
  const stored = await sharedValue(db, 'idp-signing-key', async () => {
    const legacy = legacyFile(dataDir, 'idp-signing-key.json');
    if (legacy) return JSON.stringify((JSON.parse(legacy) as StoredKey).privateJwk);
    const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
    const privateJwk = await exportJWK(privateKey);
    privateJwk.kid = randomBytes(8).toString('hex');
    privateJwk.alg = 'RS256';
    privateJwk.use = 'sig';
    return JSON.stringify(privateJwk);
  });
  return JSON.parse(stored) as JWK;
}

async function loadOrCreateSecret(db: Queryable, dataDir: string, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  return sharedValue(db, 'dev-client-secret', () => legacyFile(dataDir, 'dev-client-secret')?.trim() || randomBytes(24).toString('base64url'));
}

function publicPart(jwk: JWK): JWK {
  const { kty, n, e, kid, alg, use } = jwk;
  return { kty, n, e, kid, alg, use };
}

function secretsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function createIdentityProvider(opts: IdentityProviderOptions): Promise<IdentityProvider> {
  const privateJwk = await loadOrCreateKey(opts.db, opts.dataDir);
  const signingKey = await importJWK(privateJwk, 'RS256');
  const devClient: BuiltInClient = { clientId: DEV_CLIENT_ID, secret: await loadOrCreateSecret(opts.db, opts.dataDir, opts.devClientSecret) };
  const clients: BuiltInClient[] = [devClient, ...(opts.extraClients ?? []).map((c) => ({ clientId: c.clientId, secret: c.clientSecret, groups: c.groups }))];
  const issuer = opts.issuer;

  return {
    issuer,
    audience: opts.audience,
    devClient,
    jwks: { keys: [publicPart(privateJwk)] },
    discovery: () => ({
      issuer,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      token_endpoint: `${issuer}/oauth2/token`,
      grant_types_supported: ['client_credentials'],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nbf', 'client_id', GROUPS_CLAIM],
    }),
    authenticate: (clientId, secret) => clients.find((c) => c.clientId === clientId && secretsEqual(c.secret, secret)),
    async issueToken(client) {
      const now = Math.floor((opts.now ?? Date.now)() / 1000);
      const claims = { client_id: client.clientId, ...(client.groups ? { [GROUPS_CLAIM]: [...client.groups] } : {}) };
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: privateJwk.kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(opts.audience)
        .setSubject(client.clientId)
        .setIssuedAt(now)
        .setNotBefore(now - 5)
        .setExpirationTime(now + TOKEN_LIFETIME_SECONDS)
        .sign(signingKey);
      return { access_token: token, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS };
    },
    async sign({ subject, audience, issuedAt, expiresAt, claims }) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: privateJwk.kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(subject)
        .setIssuedAt(issuedAt)
        .setNotBefore(issuedAt - 5)
        .setExpirationTime(expiresAt)
        .sign(signingKey);
    },
  };
}
