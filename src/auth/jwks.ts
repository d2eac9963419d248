/**
 * The signing keys of an external identity provider, fetched from its `jwks_uri` and kept in memory. A token
 * signed with a key id the set does not hold triggers one refresh (providers rotate keys), but refreshes of
 * one set are at least `minRefreshIntervalMs` apart, so tokens with made-up key ids cannot make Strata
 * hammer the provider.
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTHeaderParameters, type FlattenedJWSInput } from 'jose';
import { OutboundError, type OutboundClient } from '../http/outbound.js';

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;
export type KeyLookup = (header: JWTHeaderParameters, token: FlattenedJWSInput) => ReturnType<LocalKeySet>;

/** No key of the set matches the token's key id, also after a refresh (or a refresh was not allowed yet). */
export class UnknownSigningKey extends Error {
  constructor(
    readonly kid: string | undefined,
    readonly refreshed: boolean,
  ) {
    super('no matching key');
  }
}

export class KeySetUnavailable extends Error {}

export interface RemoteKeySet {
  readonly url: string;
  lookup: KeyLookup;
  /** Fetches now (used to check a new configuration); throws KeySetUnavailable. */
  load(): Promise<void>;
  /** How many times the set was fetched (tests check the refresh rate limit). */
  readonly fetches: number;
}

export function createRemoteKeySet(url: string, outbound: OutboundClient, minRefreshIntervalMs: number, now: () => number): RemoteKeySet {
  let local: LocalKeySet | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | undefined;
  let fetches = 0;
  let lastError: string | undefined;

  async function fetchKeys(): Promise<void> {
    fetchedAt = now();
    fetches++;
    let body: unknown;
    try {
      body = await outbound.getJson(url, "the identity provider's key set (JWKS)");
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      lastError = err.message;
      throw new KeySetUnavailable(lastError);
    }
    try {
      local = createLocalJWKSet(body as JSONWebKeySet);
      lastError = undefined;
    } catch {
      lastError = `the identity provider's key set (JWKS) (${url}) is not a JSON Web Key Set ({"keys": [...]})`;
      throw new KeySetUnavailable(lastError);
    }
  }

  /** One fetch at a time; concurrent callers share it. */
  function reload(): Promise<void> {
    pending ??= fetchKeys().finally(() => {
      pending = undefined;
    });
    return pending;
  }

  return {
    url,
    get fetches() {
      return fetches;
    },
    load: reload,
    async lookup(header, token) {
      if (!local) {
        // A provider that is down is asked again only after the interval, like a refresh.
        if (lastError !== undefined && now() - fetchedAt < minRefreshIntervalMs) throw new KeySetUnavailable(lastError);
        await reload();
      }
      try {
        return await local!(header, token);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      }
      if (now() - fetchedAt < minRefreshIntervalMs) throw new UnknownSigningKey(header.kid, false);
      await reload();
      try {
        return await local!(header, token);
      } catch (err) {
        if (err instanceof errors.JWKSNoMatchingKey) throw new UnknownSigningKey(header.kid, true);
        throw err;
      }
    },
  };
}
