/**
 * A clock that moves only when a test moves it: timers fire, in time order, when `advance` or `set` reaches
 * their time (timers already due fire on the next microtask).
 */
import type { Clock } from '../../src/storage/clock.js';

interface Timer {
  at: number;
  fn: () => void;
  seq: number;
}

export class ManualClock implements Clock {
  private timers: Timer[] = [];
  private seq = 0;

  constructor(private time: number) {}

  now = (): number => this.time;

  at(at: number, fn: () => void): () => void {
    const timer = { at, fn, seq: this.seq++ };
    if (at <= this.time) {
      let cancelled = false;
      queueMicrotask(() => cancelled || fn());
      return () => (cancelled = true);
    }
    this.timers.push(timer);
    return () => (this.timers = this.timers.filter((t) => t !== timer));
  }

  /** Moves time forward by `ms`, firing the timers it passes. */
  advance(ms: number): void {
    this.set(this.time + ms);
  }

  set(time: number): void {
    this.time = Math.max(this.time, time);
    const due = this.timers.filter((t) => t.at <= this.time).sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.timers = this.timers.filter((t) => t.at > this.time);
    for (const t of due) t.fn();
  }

  /** Moves time on to the real time, if it is behind. */
  catchUp(): void {
    this.set(Date.now());
  }

  /** Timers waiting (tests check that nothing is left behind). */
  get pending(): number {
    return this.timers.length;
  }
}
