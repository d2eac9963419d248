/**
 * Helpers for authentication tests: tokens of the built-in provider for any subject (signed with the key the
 * provider keeps in the database, as it would sign them), client-credentials tokens, and groups created
 * through the API.
 */
import { SignJWT, importJWK, type JWK } from 'jose';
import { sql } from '../../src/storage/sql.js';
import type { Harness } from './harness.js';

export const BUILT_IN_ISSUER = 'http://localhost:4000';

export interface BuiltInSigner {
  jwk: JWK;
  sign(claims: Record<string, unknown>, opts?: { key?: JWK; alg?: string; kid?: string; exp?: number; nbf?: number; iss?: string; aud?: string }): Promise<string>;
}

/** The built-in provider's signing key, as the app stored it. */
export async function builtInKey(h: Harness): Promise<JWK> {
  const row = await h.strata.store.get<{ value: string }>(sql`SELECT value FROM server_meta WHERE key = 'idp-signing-key'`);
  return JSON.parse(row!.value) as JWK;
}

export async function builtInSigner(h: Harness): Promise<BuiltInSigner> {
  const jwk = await builtInKey(h);
  return {
    jwk,
    async sign(claims, opts = {}) {
      const key = await importJWK(opts.key ?? jwk, 'RS256');
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: opts.kid ?? jwk.kid })
        .setIssuer(opts.iss ?? BUILT_IN_ISSUER)
        .setAudience(opts.aud ?? BUILT_IN_ISSUER)
        .setIssuedAt(now - 10)
        .setNotBefore(opts.nbf ?? now - 10)
        .setExpirationTime(opts.exp ?? now + 600)
        .sign(key);
    },
  };
}

/** A token of the built-in provider for a configured client (client credentials grant). */
export async function clientToken(h: Harness, clientId: string, clientSecret: string): Promise<string> {
  const res = await h.strata.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  if (res.statusCode !== 200) throw new Error(`token for ${clientId}: HTTP ${res.statusCode} ${res.body}`);
  return res.json().access_token as string;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Creates one group (as the harness's administrator) in `project` and returns its id. */
export async function createGroup(h: Harness, group: Record<string, unknown>, project = 'dev'): Promise<number> {
  const res = await h.request('POST', `/api/v1/projects/${project}/groups`, { items: [group] });
  if (res.status !== 201) throw new Error(`creating group: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items[0].id as number;
}

export function capability(acl: string, actions: string[], scope: Record<string, unknown> = { all: {} }) {
  return { [acl]: { actions, scope } };
}

/** `STRATA_CLIENTS` for clients named by their ids: each has the secret `<id>-secret` and its id as its group. */
export const namedClients = (...ids: string[]): string => JSON.stringify(ids.map((id) => ({ clientId: id, clientSecret: `${id}-secret`, groups: [id] })));

/** A token of a client of `namedClients`, once a group for it (named after it) grants these capabilities. */
export async function namedClientToken(h: Harness, id: string, capabilities: unknown[]): Promise<string> {
  await createGroup(h, { name: id, sourceId: id, capabilities });
  return clientToken(h, id, `${id}-secret`);
}
