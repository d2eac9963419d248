/**
 * Failed requests to the built-in identity provider's token endpoint, counted per client id and per client
 * address in token buckets of this process's throttle store (`burst` failures at once, then `perMinute`).
 * An attempt is refused before its secret is checked, so a refusal says nothing about the secret:
 * - from an address past its budget, whatever the client id;
 * - for a client id past its budget, unless the address has not failed lately (its bucket is full): someone
 *   guessing a client's secret cannot lock its owner out, and each new address guesses once at most.
 * Only failures count: a client that knows its secret is never throttled here.
 */
import type { TokenFailureLimits } from '../config.js';
import { MemoryThrottleStore, type Bucket, type MemoryGate } from './throttle-store.js';

export interface TokenRefusal {
  /** Whole seconds, for Retry-After. */
  retryAfter: number;
  description: string;
}

export interface TokenFailures {
  /** Before the secret is checked: why this attempt is refused, or undefined when it may go on. */
  refusal(clientId: string | undefined, address: string): TokenRefusal | undefined;
  /** After a wrong or missing credential. */
  failed(clientId: string | undefined, address: string): void;
}

/** Longest client id quoted back in a refusal. */
const SHOWN_CLIENT_ID = 64;

export function createTokenFailures(limits: TokenFailureLimits, now: () => number): TokenFailures {
  const store = new MemoryThrottleStore(now);
  const bucket: Bucket[] = [{ perMs: limits.perMinute / 60_000, burst: limits.burst }];
  const byAddress = (address: string): MemoryGate => store.bind(bucket, [`address:${address}`], [], []);
  const byClient = (clientId: string): MemoryGate => store.bind(bucket, [`client:${clientId}`], [], []);
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  const budget = `at most ${limits.burst} failed attempts at once, then ${limits.perMinute} a minute`;

  return {
    refusal(clientId, address) {
      const from = byAddress(address).peek();
      if (from.waitMs > 0) {
        const retryAfter = seconds(from.waitMs);
        return { retryAfter, description: `Too many failed attempts from ${address} (${budget}); retry after ${retryAfter} s` };
      }
      if (clientId === undefined || from.full) return undefined;
      const client = byClient(clientId).peek();
      if (client.waitMs === 0) return undefined;
      const retryAfter = seconds(client.waitMs);
      const shown = JSON.stringify(clientId.length > SHOWN_CLIENT_ID ? `${clientId.slice(0, SHOWN_CLIENT_ID)}...` : clientId);
      return { retryAfter, description: `Too many failed attempts for client_id ${shown} (${budget}); retry after ${retryAfter} s` };
    },
    failed(clientId, address) {
      byAddress(address).acquire();
      if (clientId !== undefined) byClient(clientId).acquire();
    },
  };
}
