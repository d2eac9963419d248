/**
 * Where throttling budgets live. The throttle binds the budgets one kind of request draws from (one operation,
 * project and principal) into a `Gate` once, and keeps it; each request then asks its gate to take one token
 * from each rate bucket and one slot from each concurrency budget, all or nothing, and gives the slots back by
 * releasing the lease it got. The budgets and their keys come from the throttle; a store only counts. Two
 * stores: this process's memory (the default) and Redis (shared by every process that uses it,
 * `throttle-redis.ts`).
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

/** The slots one admitted request holds until it is released (exactly once: the throttle sees to that). */
export interface Lease {
  release(): void;
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

/** The budgets of one kind of request, bound to their store. */
export interface Gate {
  acquire(): Admission | Promise<Admission>;
}

export interface ThrottleStore {
  /** Binds budgets to their keys (same length and order); the gate is meant to be kept and used for many requests. */
  bind(buckets: readonly Bucket[], bucketKeys: readonly string[], slots: readonly Slots[], slotKeys: readonly string[]): Gate;
  close(): Promise<void>;
}

/** A lease that holds nothing (for a request admitted without counting it). */
export const NO_LEASE: Lease = { release() {} };

/**
 * One budget's state in this process, under its key: a token bucket's level, or a concurrency budget's count
 * (a key names one or the other, never both). A cell can go once nothing is lost by starting it over: a full
 * bucket, or a budget with nothing in flight. A gate that holds a cell that went looks it up again.
 */
interface Cell {
  readonly key: string;
  /** Bucket: tokens at `at` (a new bucket starts full: Infinity, capped by its burst). */
  tokens: number;
  at: number;
  /** Bucket: when it is full again if nothing takes from it; 0 for a concurrency budget. */
  fullAt: number;
  /** Concurrency budget: requests holding a slot. */
  inFlight: number;
  /** False once swept from the store. */
  live: boolean;
}

const SWEEP_FLOOR = 10_000;

/**
 * Budgets of this process only. A gate holds its cells, so an admission is a few field reads and writes, and
 * the gate is its own lease: its slots stay where they are while a request holds them (a cell with requests
 * in flight is never swept), so releasing gives back exactly what was taken.
 */
export class MemoryThrottleStore implements ThrottleStore {
  private readonly cells = new Map<string, Cell>();
  private sweepAt: number;

  /** `sweepFloor`: how many cells it keeps before it first sweeps (tests make it small). */
  constructor(
    readonly now: () => number,
    private readonly sweepFloor = SWEEP_FLOOR,
  ) {
    this.sweepAt = sweepFloor;
  }

  bind(buckets: readonly Bucket[], bucketKeys: readonly string[], slots: readonly Slots[], slotKeys: readonly string[]): MemoryGate {
    // Only here, before the new gate takes its cells: a sweep during an admission could forget a cell that the
    // admission has just looked up, and the token it takes would be lost with it.
    if (this.cells.size >= this.sweepAt) this.sweep(this.now());
    return new MemoryGate(this, buckets, bucketKeys.map((k) => this.cell(k)), slots, slotKeys.map((k) => this.cell(k)));
  }

  /**
   * The live cell of a key, made (a full bucket, an empty budget) if there is none. Only gates ask, for their
   * own keys: the store holds the keys of the gates the throttle keeps, and of those it dropped since the last
   * sweep.
   */
  cell(key: string): Cell {
    let c = this.cells.get(key);
    if (c === undefined) {
      c = { key, tokens: Infinity, at: 0, fullAt: 0, inFlight: 0, live: true };
      this.cells.set(key, c);
    }
    return c;
  }

  /** Forgets cells that would start over unchanged; keeps memory bounded by recent callers. */
  private sweep(now: number): void {
    for (const [key, c] of this.cells) {
      if (c.inFlight === 0 && c.fullAt <= now) {
        c.live = false;
        this.cells.delete(key);
      }
    }
    this.sweepAt = Math.max(this.sweepFloor, this.cells.size * 2);
  }

  async close(): Promise<void> {}
}

export class MemoryGate implements Gate, Lease {
  private readonly levels: number[];

  constructor(
    private readonly store: MemoryThrottleStore,
    private readonly buckets: readonly Bucket[],
    private readonly bucketCells: Cell[],
    private readonly slots: readonly Slots[],
    private readonly slotCells: Cell[],
  ) {
    this.levels = new Array<number>(buckets.length).fill(0);
  }

  acquire(): Admission {
    const now = this.store.now();
    const { buckets, bucketCells, slots, slotCells, levels } = this;
    for (let i = 0; i < buckets.length; i++) {
      const level = this.level(i, now);
      if (level < 1) return new Denial(i, Math.ceil((1 - level) / buckets[i].perMs));
      levels[i] = level;
    }
    for (let j = 0; j < slots.length; j++) {
      let c = slotCells[j];
      if (!c.live) c = slotCells[j] = this.store.cell(c.key);
      if (c.inFlight >= slots[j].max) return new Denial(buckets.length + j, 0);
    }
    for (let i = 0; i < buckets.length; i++) {
      const c = bucketCells[i];
      c.tokens = levels[i] - 1;
      c.at = now;
      c.fullAt = now + (buckets[i].burst - c.tokens) / buckets[i].perMs;
    }
    for (let j = 0; j < slotCells.length; j++) slotCells[j].inFlight++;
    return this;
  }

  release(): void {
    for (let j = 0; j < this.slotCells.length; j++) this.slotCells[j].inFlight--;
  }

  /**
   * The buckets as they are, taking nothing: how long until `acquire` could take a token from each (0: now),
   * and whether each is full (nothing taken from it lately).
   */
  peek(): { waitMs: number; full: boolean } {
    const now = this.store.now();
    let waitMs = 0;
    let full = true;
    for (let i = 0; i < this.buckets.length; i++) {
      const level = this.level(i, now);
      if (level < 1) waitMs = Math.max(waitMs, Math.ceil((1 - level) / this.buckets[i].perMs));
      if (level < this.buckets[i].burst) full = false;
    }
    return { waitMs, full };
  }

  /** Tokens in bucket `i` at `now`. */
  private level(i: number, now: number): number {
    const b = this.buckets[i];
    let c = this.bucketCells[i];
    if (!c.live) c = this.bucketCells[i] = this.store.cell(c.key);
    return Math.min(b.burst, c.tokens + Math.max(0, now - c.at) * b.perMs);
  }
}
