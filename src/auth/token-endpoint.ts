/**
 * The built-in identity provider's endpoints: OpenID Connect discovery, its keys, the sign-in page of the
 * authorization code grant (authorize.ts), and the OAuth 2.0 token endpoint (RFC 6749: client credentials and
 * authorization codes with PKCE), whose errors take the OAuth error form token clients expect.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { clientAddress } from '../http/client-address.js';
import type { RouteConfig } from '../http/pipeline.js';
import type { TokenFailures } from '../http/token-failures.js';
import { createAuthorizationCodes, signInPage, type AuthorizeParams } from './authorize.js';
import type { Queryable } from '../storage/store.js';
import type { IdentityProvider } from './idp.js';

export function registerTokenEndpoint(app: FastifyInstance, idp: IdentityProvider, failures: TokenFailures, now: () => number, db: Queryable): void {
  const codes = createAuthorizationCodes(idp, now, db);
  app.get('/.well-known/openid-configuration', { schema: { summary: "The built-in identity provider's OpenID Connect discovery document" } }, async () => idp.discovery());
  app.get('/.well-known/jwks.json', { schema: { summary: "The keys that sign the built-in identity provider's tokens" } }, async () => idp.jwks);
  const schema = {
    summary: 'An access token from the built-in identity provider',
    description:
      'OAuth 2.0 (RFC 6749), a form: grant_type=client_credentials with client_id and client_secret (or HTTP Basic), or grant_type=authorization_code with code, code_verifier (PKCE), redirect_uri and client_id; errors in the OAuth form',
  };
  const page = (reply: FastifyReply, status: number, params: AuthorizeParams, problem?: string) =>
    reply.code(status).header('cache-control', 'no-store').header('x-frame-options', 'DENY').header('content-security-policy', "frame-ancestors 'none'").type('text/html; charset=utf-8').send(signInPage(params, problem));
  app.get('/oauth2/authorize', { schema: { summary: "The built-in identity provider's sign-in page (authorization code with PKCE)" } }, async (req, reply) => {
    const params = req.query as AuthorizeParams;
    const problem = codes.check(params);
    return page(reply, problem ? 400 : 200, params, problem);
  });
  app.post('/oauth2/authorize', { config: { formBody: true } satisfies RouteConfig, schema: { summary: 'Signs in on the sign-in page: redirects with an authorization code' } }, async (req, reply) => {
    const params = (req.body ?? {}) as AuthorizeParams & { client_secret?: string };
    const problem = codes.check(params);
    if (problem) return page(reply, 400, params, problem);
    const address = clientAddress(req.ip);
    const refused = failures.refusal(params.client_id, address);
    if (refused) return page(reply.header('retry-after', String(refused.retryAfter)), 429, params, refused.description);
    const client = params.client_secret ? idp.authenticate(params.client_id!, params.client_secret) : undefined;
    if (!client) {
      failures.failed(params.client_id, address);
      return page(reply, 401, params, 'Unknown client or wrong secret');
    }
    return reply.code(303).header('cache-control', 'no-store').redirect(await codes.redirect(client, params), 303);
  });
  app.post('/oauth2/token', { config: { formBody: true } satisfies RouteConfig, schema }, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const form = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
    let clientId = form('client_id');
    let secret = form('client_secret');
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) [clientId, secret] = basicCredentials(basic[1]);
    if (form('grant_type') === 'authorization_code') {
      const redeemed = await codes.redeem({ code: form('code'), code_verifier: form('code_verifier'), redirect_uri: form('redirect_uri'), client_id: clientId });
      if ('error' in redeemed) return reply.code(400).send(redeemed);
      reply.header('cache-control', 'no-store');
      return idp.issueToken(redeemed);
    }
    if (form('grant_type') !== 'client_credentials') {
      return reply.code(400).send({
        error: 'unsupported_grant_type',
        error_description: `grant_type must be "client_credentials" or "authorization_code", got ${JSON.stringify(body.grant_type ?? null)}`,
      });
    }
    // Refused before the secret is checked, so that a refusal tells nothing about it.
    const address = clientAddress(req.ip);
    const refused = failures.refusal(clientId, address);
    if (refused) {
      return reply.code(429).header('retry-after', String(refused.retryAfter)).send({ error: 'slow_down', error_description: refused.description });
    }
    const client = clientId && secret ? idp.authenticate(clientId, secret) : undefined;
    if (!client) {
      failures.failed(clientId, address);
      return reply.code(401).send({ error: 'invalid_client', error_description: 'Unknown client_id or wrong client_secret' });
    }
    reply.header('cache-control', 'no-store');
    return idp.issueToken(client);
  });
}

/** Client id and secret of an HTTP Basic credential (RFC 6749 2.3.1: each form-urlencoded); none if malformed. */
function basicCredentials(encoded: string): [string | undefined, string | undefined] {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return [undefined, undefined];
  try {
    return [decodeURIComponent(decoded.slice(0, colon)), decodeURIComponent(decoded.slice(colon + 1))];
  } catch {
    return [undefined, undefined];
  }
}
