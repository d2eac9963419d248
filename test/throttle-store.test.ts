/**
 * The in-process throttle store against a model of what it must decide. The store forgets full buckets and
 * idle concurrency budgets to keep its memory bounded, while the throttle keeps gates that hold their cells;
 * forgetting must never change an answer: a gate whose cell was forgotten must not count against a second
 * copy of the budget, and a slot must be given back where it was taken. With a sweep floor of 2 the store
 * sweeps on almost every new cell, so random runs cross those paths often.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Denial, MemoryThrottleStore, type Bucket, type Gate, type Lease, type Slots } from '../src/http/throttle-store.js';

// Rates in tokens per ms that are powers of two and whole bursts keep the arithmetic exact, so the model and
// the store agree to the last bit.
const BUCKETS: Record<string, Bucket> = { a: { perMs: 1 / 4, burst: 1 }, b: { perMs: 1 / 64, burst: 2 }, c: { perMs: 1 / 1024, burst: 3 } };
const SLOTS: Record<string, Slots> = { x: { max: 1 }, y: { max: 2 }, z: { max: 3 } };

/** The decisions, kept the simple way: every key for ever, a new bucket full. */
class Model {
  tokens = new Map<string, { tokens: number; at: number }>();
  inFlight = new Map<string, number>();
  acquire(now: number, buckets: string[], slots: string[]): string {
    const levels: number[] = [];
    for (const [i, k] of buckets.entries()) {
      const b = BUCKETS[k];
      const s = this.tokens.get(k);
      const level = s === undefined ? b.burst : Math.min(b.burst, s.tokens + Math.max(0, now - s.at) * b.perMs);
      if (level < 1) return `denied ${i} ${Math.ceil((1 - level) / b.perMs)}`;
      levels.push(level);
    }
    for (const [j, k] of slots.entries()) if ((this.inFlight.get(k) ?? 0) >= SLOTS[k].max) return `denied ${buckets.length + j} 0`;
    buckets.forEach((k, i) => this.tokens.set(k, { tokens: levels[i] - 1, at: now }));
    for (const k of slots) this.inFlight.set(k, (this.inFlight.get(k) ?? 0) + 1);
    return 'admitted';
  }
  release(slots: string[]): void {
    for (const k of slots) this.inFlight.set(k, this.inFlight.get(k)! - 1);
  }
}

const subsetOf = (keys: string[]) => fc.subarray(keys, { minLength: 0 });
const op = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('acquire' as const), gate: fc.nat(3) }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 5000 }) }), weight: 2 },
  // The throttle drops its gates now and then (a plan keeps a bounded number): bind that kind of request anew.
  { arbitrary: fc.record({ kind: fc.constant('rebind' as const), gate: fc.nat(3) }), weight: 1 },
);

describe('in-process throttle store', () => {
  it('answers as if it never forgot a budget', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ buckets: subsetOf(Object.keys(BUCKETS)), slots: subsetOf(Object.keys(SLOTS)) }), { minLength: 4, maxLength: 4 }),
        fc.array(op, { maxLength: 300 }),
        (kinds, ops) => {
          let now = 1_000_000;
          const store = new MemoryThrottleStore(() => now, 2);
          const bind = (g: number): Gate =>
            store.bind(
              kinds[g].buckets.map((k) => BUCKETS[k]),
              kinds[g].buckets,
              kinds[g].slots.map((k) => SLOTS[k]),
              kinds[g].slots,
            );
          const gates = kinds.map((_, g) => bind(g));
          const model = new Model();
          const held: Array<{ lease: Lease; slots: string[] }> = [];
          for (const o of ops) {
            if (o.kind === 'advance') now += o.ms;
            else if (o.kind === 'rebind') gates[o.gate] = bind(o.gate);
            else if (o.kind === 'release') {
              if (held.length === 0) continue;
              const [h] = held.splice(o.pick % held.length, 1);
              h.lease.release();
              model.release(h.slots);
            } else {
              const { buckets, slots } = kinds[o.gate];
              const expected = model.acquire(now, buckets, slots);
              const got = gates[o.gate].acquire();
              if (got instanceof Promise) throw new Error('the in-process store answers synchronously');
              expect(got instanceof Denial ? `denied ${got.index} ${got.retryAfterMs}` : 'admitted').toBe(expected);
              if (!(got instanceof Denial)) held.push({ lease: got, slots });
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
