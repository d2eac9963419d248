/**
 * Bearer token verification against one identity provider: signature (RS256, ES256 or PS256 with a key the
 * provider publishes), issuer, audience, expiry and not-before. Each failure becomes a 401 that says what was
 * wrong; nothing about the token is trusted before its signature is checked.
 */
import { decodeJwt, errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { ApiError, unauthorized } from '../http/errors.js';
import { KeySetUnavailable, UnknownSigningKey, type KeyLookup } from './jwks.js';

export const ACCEPTED_ALGORITHMS = ['RS256', 'ES256', 'PS256'];

export interface VerificationTarget {
  issuer: string;
  audience: string;
  keys: KeyLookup;
  /** Named in messages: where the keys come from. */
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

/** The claims before verification: only to choose how to verify, never to decide access. */
export function unverifiedClaims(token: string): JWTPayload {
  try {
    return decodeJwt(token);
  } catch {
    throw unauthorized('The access token is malformed: expected a signed JWT (header.payload.signature)');
  }
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
    throw describeFailure(err, target);
  }
}

function describeFailure(err: unknown, target: VerificationTarget): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof KeySetUnavailable) {
    return new ApiError(503, `Cannot verify the access token: the identity provider's keys are unavailable (${err.message}); try again later`);
  }
  if (err instanceof UnknownSigningKey) {
    const kid = err.kid === undefined ? 'without a key id' : `with key id "${err.kid}"`;
    return unauthorized(
      err.refreshed
        ? `The access token is signed ${kid}, which the issuer does not publish at ${target.keysUrl} (checked again just now)`
        : `The access token is signed ${kid}, which the issuer does not publish at ${target.keysUrl}`,
    );
  }
  if (err instanceof errors.JWTExpired) return unauthorized('The access token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return unauthorized('The access token is not valid yet');
    if (err.claim === 'iss') return unauthorized(`The access token's "iss" claim is not accepted: this project accepts tokens from "${target.issuer}"`);
    if (err.claim === 'aud') return unauthorized(`The access token's "aud" claim is not accepted: this project expects the audience "${target.audience}"`);
    return unauthorized(`The access token's "${err.claim}" claim is not accepted: ${err.reason === 'check_failed' ? 'unexpected value' : err.reason}`);
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return unauthorized('The access token signature is invalid');
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return unauthorized(`The access token is signed with an algorithm that is not accepted (accepted: ${ACCEPTED_ALGORITHMS.join(', ')})`);
  }
  if (err instanceof errors.JWKSNoMatchingKey) return unauthorized(`The access token is signed with a key the issuer does not publish at ${target.keysUrl}`);
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return unauthorized('The access token is malformed');
  return unauthorized('The access token is invalid');
}
