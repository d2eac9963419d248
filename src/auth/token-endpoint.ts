/**
 * The built-in identity provider's endpoints: OpenID Connect discovery, its keys, and the OAuth 2.0 token
 * endpoint (RFC 6749, client credentials), whose errors take the OAuth error form token clients expect.
 */
import type { FastifyInstance } from 'fastify';
import { clientAddress } from '../http/client-address.js';
import type { RouteConfig } from '../http/pipeline.js';
import type { TokenFailures } from '../http/token-failures.js';
import type { IdentityProvider } from './idp.js';

export function registerTokenEndpoint(app: FastifyInstance, idp: IdentityProvider, failures: TokenFailures): void {
  app.get('/.well-known/openid-configuration', { schema: { summary: "The built-in identity provider's OpenID Connect discovery document" } }, async () => idp.discovery());
  app.get('/.well-known/jwks.json', { schema: { summary: "The keys that sign the built-in identity provider's tokens" } }, async () => idp.jwks);
  const schema = {
    summary: 'An access token from the built-in identity provider',
    description: 'OAuth 2.0 client credentials (RFC 6749): a form with grant_type=client_credentials, client_id and client_secret (or HTTP Basic); errors in the OAuth form',
  };
  app.post('/oauth2/token', { config: { formBody: true } satisfies RouteConfig, schema }, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const form = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
    let clientId = form('client_id');
    let secret = form('client_secret');
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) [clientId, secret] = basicCredentials(basic[1]);
    if (form('grant_type') !== 'client_credentials') {
      return reply.code(400).send({
        error: 'unsupported_grant_type',
        error_description: `grant_type must be "client_credentials", got ${JSON.stringify(body.grant_type ?? null)}`,
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
