/**
 * Bearer token verification: signature, algorithm, issuer, audience, expiry and not-before, then mapping of
 * the claims to a principal. Verified tokens are cached until they expire so verification does not dominate
 * the cost of small requests.
 */
import { createLocalJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { unauthorized } from '../http/errors.js';
import type { IdentityProvider } from './idp.js';
import type { Principal } from './principal.js';

export interface TokenVerifier {
  /** Verifies the `Authorization` header value and returns the principal, or throws 401. */
  verify(authorization: string | undefined): Promise<Principal>;
}

const MAX_CACHED_TOKENS = 10_000;

export function createTokenVerifier(idp: IdentityProvider, toPrincipal: (claims: JWTPayload) => Principal): TokenVerifier {
  const keys = createLocalJWKSet(idp.jwks);
  const cache = new Map<string, Principal>();

  async function verifyToken(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: idp.issuer,
        audience: idp.audience,
        algorithms: ['RS256'],
        requiredClaims: ['exp', 'sub'],
      });
      return { ...toPrincipal(payload), expiresAt: payload.exp };
    } catch (err) {
      throw unauthorized(describeFailure(err));
    }
  }

  return {
    async verify(authorization) {
      if (authorization === undefined || authorization === '') {
        throw unauthorized('Missing Authorization header; send "Authorization: Bearer <access token>"');
      }
      const match = /^Bearer +([A-Za-z0-9\-_.~+/]+=*) *$/i.exec(authorization);
      if (!match) throw unauthorized('Malformed Authorization header; expected "Bearer <access token>"');
      const token = match[1];
      const now = Date.now() / 1000;
      const cached = cache.get(token);
      if (cached && (cached.expiresAt ?? 0) > now) return cached;
      if (cached) cache.delete(token);
      const principal = await verifyToken(token);
      if (cache.size >= MAX_CACHED_TOKENS) cache.delete(cache.keys().next().value!);
      cache.set(token, principal);
      return principal;
    },
  };
}

function describeFailure(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'The access token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'The access token is not valid yet';
    return `The access token's "${err.claim}" claim is not accepted: ${err.reason === 'check_failed' ? 'unexpected value' : err.reason}`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'The access token signature is invalid';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'The access token is signed with an algorithm that is not accepted';
  if (err instanceof errors.JWKSNoMatchingKey) return 'The access token is signed with an unknown key';
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'The access token is malformed';
  return 'The access token is invalid';
}
