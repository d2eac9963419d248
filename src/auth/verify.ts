/**
 * Bearer token verification against one identity provider: signature (RS256, ES256 or PS256 with a key the
 * provider publishes), issuer, audience, expiry and not-before. Nothing about the token is trusted before its
 * signature is checked.
 *
 * What a refusal says depends on who could learn from it. What is wrong with the token itself (its form, its
 * algorithm, a missing, past or future time claim) is said as such: anyone can read a token's header and
 * claims. What depends on the project (the provider it trusts, the audience it expects, its keys) is one
 * message, `TOKEN_NOT_ACCEPTED`, whatever the project and also for a project that does not exist: a caller
 * without a token the project accepts learns neither how the project is configured nor whether it exists.
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { ApiError, unauthorized } from '../http/errors.js';
import { KeySetUnavailable, type KeyLookup } from './jwks.js';

export const ACCEPTED_ALGORITHMS = ['RS256', 'ES256', 'PS256'];

export interface VerificationTarget {
  issuer: string;
  audience: string;
  keys: KeyLookup;
  /** Where the keys come from (a cache key). */
  keysUrl: string;
}

export const MISSING_AUTHORIZATION = 'Missing Authorization header; send "Authorization: Bearer <access token>"';

/**
 * The token of an `Authorization: Bearer <token>` header, or 401. A script whose token request failed sends
 * nothing or that request's error body as the token, so those two are named as such.
 */
export function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization === '') throw unauthorized(MISSING_AUTHORIZATION);
  const match = /^Bearer +([A-Za-z0-9\-_.~+/]+=*) *$/i.exec(authorization);
  if (match) return match[1];
  const given = /^Bearer\b *(.*)$/is.exec(authorization)?.[1];
  if (given === '') throw unauthorized('The Authorization header has no token after "Bearer"; did getting the access token fail?');
  if (given?.startsWith('{')) {
    throw unauthorized('The bearer token is JSON, not an access token (a JWT: header.payload.signature); was it the error answer of a token request?');
  }
  throw unauthorized('Malformed Authorization header; expected "Bearer <access token>", the token a JWT (header.payload.signature)');
}

/** Every refusal of a token that did not verify with the project's provider (see above). */
export const TOKEN_NOT_ACCEPTED =
  'The access token is not accepted: it must be signed by the identity provider this project trusts, with a key it publishes, and name the issuer and audience the project expects';

/**
 * The claims before verification, only to choose how to verify, never to decide access; a 401 for what is
 * wrong with the token whatever the project (see above), in the order verification would find it.
 */
export function unverifiedClaims(token: string, nowMs: number): JWTPayload {
  let claims: JWTPayload;
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
    claims = decodeJwt(token);
  } catch {
    throw unauthorized('The access token is malformed: expected a signed JWT (header.payload.signature)');
  }
  if (typeof alg !== 'string' || !ACCEPTED_ALGORITHMS.includes(alg)) {
    throw unauthorized(`The access token is signed with an algorithm that is not accepted (accepted: ${ACCEPTED_ALGORITHMS.join(', ')})`);
  }
  const now = Math.floor(nowMs / 1000);
  for (const claim of ['exp', 'sub'] as const) if (claims[claim] === undefined) throw unauthorized(`The access token has no "${claim}" claim`);
  if (typeof claims.exp !== 'number' || claims.exp <= now) throw unauthorized('The access token has expired');
  if (typeof claims.nbf === 'number' && claims.nbf > now) throw unauthorized('The access token is not valid yet');
  return claims;
}

export async function verifyToken(token: string, target: VerificationTarget, nowMs: number): Promise<JWTPayload> {
  const options: JWTVerifyOptions = {
    issuer: target.issuer,
    audience: target.audience,
    algorithms: ACCEPTED_ALGORITHMS,
    requiredClaims: ['exp', 'sub'],
    currentDate: new Date(nowMs),
  };
  try {
    try {
      return (await jwtVerify(token, target.keys, options)).payload;
    } catch (err) {
      if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
      // Several published keys fit a token without a key id: the signature decides which one signed it.
      for await (const key of err as errors.JWKSMultipleMatchingKeys & AsyncIterable<CryptoKey>) {
        try {
          return (await jwtVerify(token, key, options)).payload;
        } catch (inner) {
          if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
        }
      }
      throw new errors.JWSSignatureVerificationFailed();
    }
  } catch (err) {
    throw describeFailure(err);
  }
}

function describeFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof KeySetUnavailable) {
    return new ApiError(503, `Cannot verify the access token: the identity provider's keys are unavailable (${err.message}); try again later`);
  }
  return unauthorized(TOKEN_NOT_ACCEPTED);
}
