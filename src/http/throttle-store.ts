/**
 * Where throttling budgets live. A store takes one token from each of a request's rate buckets and one slot
 * from each of its concurrency budgets, all or nothing, and gives the slots back on release. The budgets and
 * their keys come from the throttle; a store only counts. Two stores: this process's memory (the default) and
 * Redis (shared by every process that uses it, `throttle-redis.ts`).
 */

/** A token bucket: `perMs` tokens per millisecond, holding at most `burst`. */
export interface Bucket {
  readonly perMs: number;
  readonly burst: number;
}

/** A concurrency budget: at most `max` requests holding a slot at once. */
export interface Slots {
  readonly max: number;
}

/** The slots one admitted request holds until it is released. */
export interface Lease {
  readonly id: string;
  readonly slotKeys: readonly string[];
}

/** Why a request was refused: the index of the exceeded budget (buckets first, then slots) and when to retry. */
export class Denial {
  constructor(
    readonly index: number,
    /** Milliseconds until a token is available; 0 for a concurrency budget (a slot frees when a request ends). */
    readonly retryAfterMs: number,
  ) {}
}

export type Admission = Lease | Denial;

export interface ThrottleStore {
  acquire(buckets: readonly Bucket[], bucketKeys: readonly string[], slots: readonly Slots[], slotKeys: readonly string[]): Admission | Promise<Admission>;
  /** Gives a lease's slots back; releasing twice is the caller's mistake, the throttle never does. */
  release(lease: Lease): void | Promise<void>;
  close(): Promise<void>;
}

interface BucketState {
  tokens: number;
  at: number;
  /** When the bucket is full again if nothing takes from it (then the entry can go). */
  fullAt: number;
}

const SWEEP_FLOOR = 10_000;

/** Budgets of this process only. Synchronous, so an unthrottled request pays a few map lookups and nothing else. */
export class MemoryThrottleStore implements ThrottleStore {
  private readonly buckets = new Map<string, BucketState>();
  private readonly inFlight = new Map<string, number>();
  private readonly levels: number[] = [];
  private readonly states: Array<BucketState | undefined> = [];
  private sweepAt = SWEEP_FLOOR;

  constructor(private readonly now: () => number) {}

  acquire(buckets: readonly Bucket[], bucketKeys: readonly string[], slots: readonly Slots[], slotKeys: readonly string[]): Admission {
    const now = this.now();
    for (let i = 0; i < buckets.length; i++) {
      const b = buckets[i];
      const s = this.buckets.get(bucketKeys[i]);
      const level = s === undefined ? b.burst : Math.min(b.burst, s.tokens + Math.max(0, now - s.at) * b.perMs);
      if (level < 1) return new Denial(i, Math.ceil((1 - level) / b.perMs));
      this.levels[i] = level;
      this.states[i] = s;
    }
    for (let j = 0; j < slots.length; j++) {
      if ((this.inFlight.get(slotKeys[j]) ?? 0) >= slots[j].max) return new Denial(buckets.length + j, 0);
    }
    for (let i = 0; i < buckets.length; i++) {
      const b = buckets[i];
      const tokens = this.levels[i] - 1;
      const fullAt = now + (b.burst - tokens) / b.perMs;
      const s = this.states[i];
      if (s) {
        s.tokens = tokens;
        s.at = now;
        s.fullAt = fullAt;
      } else {
        this.buckets.set(bucketKeys[i], { tokens, at: now, fullAt });
      }
      this.states[i] = undefined;
    }
    for (let j = 0; j < slotKeys.length; j++) this.inFlight.set(slotKeys[j], (this.inFlight.get(slotKeys[j]) ?? 0) + 1);
    if (this.buckets.size > this.sweepAt) this.sweep(now);
    return { id: '', slotKeys };
  }

  release(lease: Lease): void {
    for (const key of lease.slotKeys) {
      const n = (this.inFlight.get(key) ?? 1) - 1;
      if (n > 0) this.inFlight.set(key, n);
      else this.inFlight.delete(key);
    }
  }

  /** Forgets full buckets (a new one starts full, so nothing changes); keeps memory bounded by recent callers. */
  private sweep(now: number): void {
    for (const [key, s] of this.buckets) if (s.fullAt <= now) this.buckets.delete(key);
    this.sweepAt = Math.max(SWEEP_FLOOR, this.buckets.size * 2);
  }

  async close(): Promise<void> {}
}
