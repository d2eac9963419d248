/**
 * The built-in identity provider's authorization code grant with PKCE (RFC 6749 4.1, RFC 7636 S256), for
 * browser applications such as the web console. `GET /oauth2/authorize` shows a sign-in form for the client
 * named by `client_id`; the person signing in proves they may act as that client by typing its secret there,
 * so the browser application never holds a secret. The code is a short-lived token signed with the
 * provider's key (any process on the database redeems it), bound to the PKCE challenge and redirect URI,
 * and redeemed once: its id is kept in the database until it expires. Redirect URIs must be on the provider's own origin: a code is never sent
 * to another site.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { sql } from '../storage/sql.js';
import type { Queryable } from '../storage/store.js';
import type { BuiltInClient, IdentityProvider } from './idp.js';

export const CODE_LIFETIME_SECONDS = 60;

/** The parameters of an authorization request, as the query (GET) or form (POST) carries them. */
export interface AuthorizeParams {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  state?: string;
  scope?: string;
}

export interface CodeGrant {
  code?: string;
  code_verifier?: string;
  redirect_uri?: string;
  client_id?: string;
}

/** An OAuth error answer: `error` and its description. */
export interface OAuthRefusal {
  error: string;
  error_description: string;
}

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export interface AuthorizationCodes {
  /** What is wrong with an authorization request (shown on the page, never redirected), or undefined. */
  check(params: AuthorizeParams): string | undefined;
  /** The address the browser goes to with a new code for a client that proved itself. */
  redirect(client: BuiltInClient, params: AuthorizeParams): Promise<string>;
  /** The client a code grant names, or the OAuth refusal. */
  redeem(grant: CodeGrant): Promise<BuiltInClient | OAuthRefusal>;
}

export function createAuthorizationCodes(idp: IdentityProvider, now: () => number, db: Queryable): AuthorizationCodes {
  const audience = `${idp.issuer}/oauth2/authorize`;
  const keys = createLocalJWKSet(idp.jwks);
  const origin = new URL(idp.issuer).origin;

  function onOrigin(uri: string | undefined): boolean {
    try {
      return uri !== undefined && new URL(uri).origin === origin;
    } catch {
      return false;
    }
  }

  return {
    check(p) {
      if (p.response_type !== 'code') return `response_type must be "code", got ${JSON.stringify(p.response_type ?? null)}`;
      if (!p.client_id) return 'client_id is required';
      if (!onOrigin(p.redirect_uri)) return `redirect_uri must be an address on ${origin}, got ${JSON.stringify(p.redirect_uri ?? null)}`;
      if (p.code_challenge_method !== 'S256') return `code_challenge_method must be "S256", got ${JSON.stringify(p.code_challenge_method ?? null)}`;
      if (!CHALLENGE.test(p.code_challenge ?? '')) return 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters)';
      return undefined;
    },
    async redirect(client, p) {
      const issuedAt = Math.floor(now() / 1000);
      const code = await idp.sign({
        subject: client.clientId,
        audience,
        issuedAt,
        expiresAt: issuedAt + CODE_LIFETIME_SECONDS,
        claims: { challenge: p.code_challenge, redirect_uri: p.redirect_uri, jti: randomBytes(12).toString('base64url') },
      });
      const to = new URL(p.redirect_uri!);
      to.searchParams.set('code', code);
      if (p.state !== undefined) to.searchParams.set('state', p.state);
      return to.toString();
    },
    async redeem(g) {
      const invalid = (description: string): OAuthRefusal => ({ error: 'invalid_grant', error_description: description });
      if (!g.code) return { error: 'invalid_request', error_description: 'code is required' };
      if (!VERIFIER.test(g.code_verifier ?? '')) return { error: 'invalid_request', error_description: 'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9 and -._~' };
      let claims: Record<string, unknown>;
      try {
        ({ payload: claims } = await jwtVerify(g.code, keys, { issuer: idp.issuer, audience, currentDate: new Date(now()) }));
      } catch {
        return invalid('The code is not valid or has expired');
      }
      const challenge = createHash('sha256').update(g.code_verifier!).digest('base64url');
      if (claims.challenge !== challenge) return invalid('code_verifier does not match the code_challenge');
      if (claims.redirect_uri !== g.redirect_uri) return invalid('redirect_uri differs from the one of the authorization request');
      if (g.client_id !== undefined && g.client_id !== claims.sub) return invalid('The code was issued to another client');
      // Codes past their expiry are refused by their signature's check above: their ids need keeping no longer.
      await db.run(sql`DELETE FROM redeemed_codes WHERE expires_at < ${Math.floor(now() / 1000)}`);
      const first = await db.run(sql`INSERT INTO redeemed_codes (jti, expires_at) VALUES (${String(claims.jti)}, ${Number(claims.exp)}) ON CONFLICT DO NOTHING`);
      if (first.changes === 0) return invalid('The code was already used');
      const client = idp.client(String(claims.sub));
      return client ?? invalid('The client no longer exists');
    },
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The sign-in page: the client's secret, with the authorization request's parameters carried along. */
export function signInPage(params: AuthorizeParams, problem: string | undefined): string {
  const hidden = (['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'state', 'scope'] as const)
    .filter((k) => params[k] !== undefined)
    .map((k) => `<input type="hidden" name="${k}" value="${escapeHtml(params[k]!)}">`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Sign in to Strata</title><style>body{font:15px system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}
input[type=password]{width:100%;padding:.4rem;margin:.4rem 0 1rem;box-sizing:border-box}.problem{color:#b00020}</style></head>
<body><h1>Sign in to Strata</h1><form method="post" action="/oauth2/authorize">${hidden}
<p>Client <b>${escapeHtml(params.client_id ?? '')}</b></p>
<label>Client secret<input type="password" name="client_secret" autocomplete="current-password" autofocus required></label>
${problem ? `<p class="problem">${escapeHtml(problem)}</p>` : ''}<button type="submit">Sign in</button></form>
<p><small>For the administrator client <code>strata-admin</code>, <code>npm run -s strata -- admin-secret</code> prints the secret.</small></p></body></html>`;
}
