/**
 * Budgets shared through Redis by every Strata process that points at it (`STRATA_REDIS_URL`).
 *
 * One Lua script per request does the whole admission atomically: refill and check every token bucket (a hash
 * `{tokens, at}` with an expiry of one full refill), check every concurrency budget, then take one token from
 * each bucket and add the request's lease to each concurrency budget. Time is Redis's own clock (`TIME`), so
 * processes with skewed clocks agree.
 *
 * A concurrency budget is a sorted set of leases scored by their expiry. A process refreshes the expiry of
 * its live leases every LEASE_MS / 3 and removes a lease when its request ends; leases of a process that died
 * expire after LEASE_MS and are swept by the next admission, so a crash never holds slots for long.
 *
 * If Redis cannot be reached while serving, requests are admitted (and the failure logged): throttling
 * protects the service, it must not become the reason it is down.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError } from '../config.js';
import { Denial, NO_LEASE, type Admission, type Bucket, type Gate, type Lease, type Slots, type ThrottleStore } from './throttle-store.js';

/** How long a lease outlives its last refresh. */
export const LEASE_MS = 60_000;

const ACQUIRE = `
local nb = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local levels = {}
for i = 1, nb do
  local perMs = tonumber(ARGV[2 * i])
  local burst = tonumber(ARGV[2 * i + 1])
  local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local level = tonumber(state[1])
  if level == nil then
    level = burst
  else
    level = math.min(burst, level + math.max(0, now - tonumber(state[2])) * perMs)
  end
  if level < 1 then
    return {i, math.ceil((1 - level) / perMs)}
  end
  levels[i] = level
end
local ns = #KEYS - nb
local base = 2 * nb + 1
for j = 1, ns do
  local key = KEYS[nb + j]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= tonumber(ARGV[base + j]) then
    return {nb + j, 0}
  end
end
for i = 1, nb do
  local perMs = tonumber(ARGV[2 * i])
  local burst = tonumber(ARGV[2 * i + 1])
  redis.call('HSET', KEYS[i], 'tokens', tostring(levels[i] - 1), 'at', now)
  redis.call('PEXPIRE', KEYS[i], math.ceil(burst / perMs) + 1000)
end
local lease = ARGV[base + ns + 1]
local ttl = tonumber(ARGV[base + ns + 2])
for j = 1, ns do
  redis.call('ZADD', KEYS[nb + j], now + ttl, lease)
  redis.call('PEXPIRE', KEYS[nb + j], ttl)
end
return 0
`;

const RELEASE = `
for i = 1, #KEYS do
  redis.call('ZREM', KEYS[i], ARGV[1])
end
return 0
`;

// Only leases still present are refreshed (XX): a lease released meanwhile is not brought back.
const REFRESH = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], 'XX', now + ttl, ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return 0
`;

type Arg = string | number;

/** A lease held in Redis: its member in each concurrency budget's sorted set. */
interface RedisLease extends Lease {
  readonly id: string;
  readonly slotKeys: readonly string[];
}

interface ThrottleCommands {
  strataThrottleAcquire(numKeys: number, ...args: Arg[]): Promise<0 | [number, number]>;
  strataThrottleRelease(numKeys: number, ...args: Arg[]): Promise<number>;
  strataThrottleRefresh(numKeys: number, ...args: Arg[]): Promise<number>;
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

export class RedisThrottleStore implements ThrottleStore {
  private readonly commands: ThrottleCommands;
  private readonly live = new Map<string, RedisLease>();
  private readonly tag = randomBytes(6).toString('hex');
  private counter = 0;
  private readonly timer: NodeJS.Timeout;
  private lastWarning = 0;

  private constructor(
    private readonly redis: Redis,
    private readonly log: FastifyBaseLogger,
  ) {
    redis.defineCommand('strataThrottleAcquire', { lua: ACQUIRE });
    redis.defineCommand('strataThrottleRelease', { lua: RELEASE });
    redis.defineCommand('strataThrottleRefresh', { lua: REFRESH });
    this.commands = redis as unknown as ThrottleCommands;
    this.timer = setInterval(() => this.refresh(), LEASE_MS / 3);
    this.timer.unref();
  }

  /** Connects, or refuses to start with a message when Redis cannot be reached. */
  static async connect(url: string, log: FastifyBaseLogger): Promise<RedisThrottleStore> {
    const redis = new Redis(url, {
      lazyConnect: true,
      // Fail fast rather than queue while disconnected: a request must not wait for Redis to come back.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 5000,
      commandTimeout: 2000,
    });
    const store = new RedisThrottleStore(redis, log);
    redis.on('error', (err: Error) => store.warn(err, 'Redis connection error'));
    try {
      await redis.connect();
      await redis.ping();
    } catch (err) {
      await store.close();
      throw new ConfigError(`STRATA_REDIS_URL: cannot reach Redis at ${redactUrl(url)}: ${(err as Error).message}`);
    }
    return store;
  }

  bind(buckets: readonly Bucket[], bucketKeys: readonly string[], slots: readonly Slots[], slotKeys: readonly string[]): Gate {
    // The script's fixed arguments, in its order: keys, the number of buckets, each bucket's rate and burst, each budget's maximum.
    const fixed: Arg[] = [...bucketKeys, ...slotKeys, buckets.length];
    for (const b of buckets) fixed.push(b.perMs, b.burst);
    for (const s of slots) fixed.push(s.max);
    return { acquire: () => this.acquire(fixed, bucketKeys.length + slotKeys.length, slotKeys) };
  }

  private async acquire(fixed: readonly Arg[], numKeys: number, slotKeys: readonly string[]): Promise<Admission> {
    const id = `${this.tag}:${++this.counter}`;
    let reply: 0 | [number, number];
    try {
      reply = await this.commands.strataThrottleAcquire(numKeys, ...fixed, id, LEASE_MS);
    } catch (err) {
      this.warn(err as Error, 'throttling skipped: Redis did not answer');
      return NO_LEASE;
    }
    if (reply !== 0) return new Denial(reply[0] - 1, reply[1]);
    if (slotKeys.length === 0) return NO_LEASE;
    const lease: RedisLease = { id, slotKeys, release: () => void this.release(lease) };
    this.live.set(id, lease);
    return lease;
  }

  private async release(lease: RedisLease): Promise<void> {
    if (!this.live.delete(lease.id)) return;
    try {
      await this.commands.strataThrottleRelease(lease.slotKeys.length, ...lease.slotKeys, lease.id);
    } catch (err) {
      this.warn(err as Error, `Redis did not take back lease ${lease.id}; it expires within ${LEASE_MS / 1000} s`);
    }
  }

  private refresh(): void {
    if (this.live.size === 0) return;
    const keys: string[] = [];
    const members: string[] = [];
    for (const lease of this.live.values()) {
      for (const key of lease.slotKeys) {
        keys.push(key);
        members.push(lease.id);
      }
    }
    this.commands.strataThrottleRefresh(keys.length, ...keys, LEASE_MS, ...members).catch((err: Error) => this.warn(err, 'Redis lease refresh failed'));
  }

  /** At most one warning per 10 seconds: an unreachable Redis must not flood the log at request rate. */
  private warn(err: Error, message: string): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return;
    this.lastWarning = now;
    this.log.warn({ err }, message);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.live.clear();
    this.redis.disconnect();
  }
}
