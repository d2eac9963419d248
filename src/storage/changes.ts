/**
 * Changes and waiting for them. A write records what it changed (area, project, key) in its transaction;
 * once it commits, the waiters of those changes are woken: in this process at once (an after-commit effect),
 * and in every other process on the same PostgreSQL through NOTIFY, which PostgreSQL delivers on commit only,
 * once, and never for a transaction that rolled back (nor for an attempt run again after a conflict).
 *
 * A waiter is a promise and an entry in a map: it holds no connection, transaction or thread. It ends when a
 * matching change commits, at its deadline (on the injected clock), or when its signal aborts (the client
 * went away). To miss nothing, a caller watches before it reads: `watch()`, read the state, and only if
 * there is nothing to answer yet, `wait()`. A change committed after the watch began wakes it, even one
 * committed before `wait()` was called.
 *
 * Each process listens on one dedicated connection (not the pool's). When it drops, the feed connects again
 * with growing delays and then wakes every waiter, since notifications sent meanwhile are lost: a waiter
 * woken for nothing reads again and waits again. SQLite has no such channel: processes sharing one SQLite
 * file wake only their own waiters.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Clock } from './clock.js';
import { PostgresStore } from './postgres-store.js';
import { sql } from './sql.js';
import type { Queryable, Store } from './store.js';

export interface Change {
  /** The kind of thing changed, named by the area that owns it (`jobs`, `files`, ...). */
  area: string;
  projectId: number;
  /** The item changed, in the area's own terms; absent for "something in the area". */
  key?: string;
}

/** What a waiter waits for: a change of the area, in the project (any project when absent), of the key (any when absent). */
export interface ChangeFilter {
  area: string;
  projectId?: number;
  key?: string;
}

export type WaitOutcome = 'changed' | 'timeout' | 'aborted';

export interface WaitOptions {
  /** When to give up, in the feed's clock's milliseconds. */
  deadline: number;
  /** Ends the wait early, for example when the client disconnects. */
  signal?: AbortSignal;
}

export interface Watch {
  /** Whether a matching change has committed since the watch began. */
  readonly changed: boolean;
  /** Resolves at the first matching change since the watch began, at the deadline, or on abort; then the watch ends. */
  wait(options: WaitOptions): Promise<WaitOutcome>;
  /** Ends the watch without waiting. */
  close(): void;
}

const CHANNEL = 'strata_changes';
/** NOTIFY takes payloads below 8000 bytes. */
const MAX_PAYLOAD = 7900;

type Encoded = [area: string, projectId: number, key: string | null];

/** The notifications of these changes: JSON `[origin, changes]`, split to fit; a key too long for one is dropped (a wider wake). */
export function notificationPayloads(origin: string, changes: readonly Change[]): string[] {
  const head = JSON.stringify([origin, []]).length;
  const payloads: string[] = [];
  let batch: string[] = [];
  let size = head;
  for (const c of changes) {
    let item = JSON.stringify([c.area, c.projectId, c.key ?? null] satisfies Encoded);
    if (Buffer.byteLength(item) + head > MAX_PAYLOAD) item = JSON.stringify([c.area, c.projectId, null] satisfies Encoded);
    const bytes = Buffer.byteLength(item) + 1;
    if (batch.length > 0 && size + bytes > MAX_PAYLOAD) {
      payloads.push(`[${JSON.stringify(origin)},[${batch.join(',')}]]`);
      batch = [];
      size = head;
    }
    batch.push(item);
    size += bytes;
  }
  if (batch.length > 0) payloads.push(`[${JSON.stringify(origin)},[${batch.join(',')}]]`);
  return payloads;
}

class Watcher implements Watch {
  changed = false;
  /** A subscriber's callback: the watcher stays until closed. */
  onFire?: () => void;
  private settle?: (outcome: WaitOutcome) => void;

  constructor(
    readonly filter: ChangeFilter,
    private readonly clock: Clock,
    private readonly remove: (w: Watcher) => void,
    private readonly closed: () => boolean,
  ) {}

  matches(c: Change): boolean {
    return (this.filter.projectId === undefined || this.filter.projectId === c.projectId) && (this.filter.key === undefined || c.key === undefined || this.filter.key === c.key);
  }

  fire(): void {
    this.changed = true;
    this.onFire?.();
    this.settle?.('changed');
  }

  /** Ends a wait under way with `outcome`: the feed is closing. */
  end(outcome: WaitOutcome): void {
    if (this.settle) this.settle(outcome);
    else this.close();
  }

  wait({ deadline, signal }: WaitOptions): Promise<WaitOutcome> {
    if (this.settle) throw new Error('a watch is waited on once');
    const now: WaitOutcome | undefined = this.changed ? 'changed' : signal?.aborted || this.closed() ? 'aborted' : this.clock.now() >= deadline ? 'timeout' : undefined;
    if (now) {
      this.close();
      return Promise.resolve(now);
    }
    return new Promise<WaitOutcome>((resolve) => {
      const abort = () => this.settle?.('aborted');
      const cancelTimer = this.clock.at(deadline, () => this.settle?.('timeout'));
      signal?.addEventListener('abort', abort, { once: true });
      this.settle = (outcome) => {
        this.settle = () => {};
        cancelTimer();
        signal?.removeEventListener('abort', abort);
        this.close();
        resolve(outcome);
      };
    });
  }

  close(): void {
    this.remove(this);
  }
}

export class ChangeFeed {
  /** Watchers by area. */
  private readonly watchers = new Map<string, Set<Watcher>>();
  /** Tells this process's notifications from other processes'. */
  private readonly origin = randomUUID();
  private readonly listener?: Listener;
  private closed = false;

  /** With a PostgreSQL store, other processes' changes are heard too (call `start()`). */
  constructor(
    private readonly clock: Clock,
    store?: Store,
  ) {
    if (store instanceof PostgresStore) {
      this.listener = new Listener(
        store.pool.options,
        (payload) => this.notified(payload),
        () => this.wakeAll(),
      );
    }
  }

  /** Starts listening for other processes' changes; rejects when the database cannot be reached. */
  async start(): Promise<void> {
    await this.listener?.start();
  }

  /** Resolves the next time the feed begins to listen again after losing its connection. */
  relistened(): Promise<void> {
    return this.listener?.relistened() ?? Promise.resolve();
  }

  /**
   * Records, in the writer's transaction, what it changes: once the transaction commits, waiters of these
   * changes are woken, here and in every process on the same PostgreSQL.
   */
  async record(tx: Queryable, changes: readonly Change[]): Promise<void> {
    if (changes.length === 0) return;
    tx.afterCommit(() => this.deliver(changes));
    if (tx.dialect.kind === 'postgres') {
      for (const payload of notificationPayloads(this.origin, changes)) await tx.run(sql`SELECT pg_notify(${CHANNEL}, ${payload})`);
    }
  }

  /** Begins watching for a change; see the module's comment for why a watch comes before the read. */
  watch(filter: ChangeFilter): Watch {
    const w = new Watcher(
      filter,
      this.clock,
      (x) => this.watchers.get(x.filter.area)?.delete(x),
      () => this.closed,
    );
    let set = this.watchers.get(filter.area);
    if (!set) this.watchers.set(filter.area, (set = new Set()));
    set.add(w);
    return w;
  }

  /** Calls `onChange` at every matching change until the result is called. */
  subscribe(filter: ChangeFilter, onChange: () => void): () => void {
    const w = this.watch(filter) as Watcher;
    w.onFire = onChange;
    return () => w.close();
  }

  /** Waits for a change from now on. */
  wait(filter: ChangeFilter, options: WaitOptions): Promise<WaitOutcome> {
    return this.watch(filter).wait(options);
  }

  /** The waiters now, for tests and metrics: watches, not the standing subscriptions (the job runner's). */
  get waiting(): number {
    let n = 0;
    for (const set of this.watchers.values()) for (const w of set) if (!(w as Watcher).onFire) n++;
    return n;
  }

  /** Stops listening and ends every wait, under way or to come, as aborted. */
  async close(): Promise<void> {
    this.closed = true;
    for (const set of this.watchers.values()) for (const w of [...set]) w.end('aborted');
    await this.listener?.close();
  }

  private deliver(changes: readonly Change[]): void {
    for (const c of changes) {
      const set = this.watchers.get(c.area);
      if (set) for (const w of [...set]) if (w.matches(c)) w.fire();
    }
  }

  private notified(payload: string): void {
    let origin: unknown;
    let changes: unknown;
    try {
      [origin, changes] = JSON.parse(payload) as [unknown, unknown];
    } catch {
      return;
    }
    if (origin === this.origin || !Array.isArray(changes)) return;
    this.deliver((changes as Encoded[]).map(([area, projectId, key]) => ({ area, projectId, key: key ?? undefined })));
  }

  private wakeAll(): void {
    for (const set of this.watchers.values()) for (const w of [...set]) w.fire();
  }
}

const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5000;

/** LISTEN on a connection of its own, connecting again when it drops. */
class Listener {
  private client?: pg.Client;
  private closed = false;
  private delay = RECONNECT_FIRST_MS;
  private retry?: NodeJS.Timeout;
  private waiting: Array<() => void> = [];

  constructor(
    private readonly options: pg.ClientConfig,
    private readonly onPayload: (payload: string) => void,
    private readonly onRelisten: () => void,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  relistened(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ ...this.options, application_name: 'strata-changes' });
    // A broken connection also ends ('end' below); the error itself needs no handling beyond that.
    client.on('error', () => {});
    client.on('notification', (m) => {
      if (m.channel === CHANNEL && m.payload) this.onPayload(m.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    client.once('end', () => this.dropped());
    this.client = client;
    this.delay = RECONNECT_FIRST_MS;
  }

  private dropped(): void {
    this.client = undefined;
    if (!this.closed) this.reconnectLater();
  }

  private reconnectLater(): void {
    this.retry = setTimeout(() => {
      this.connect().then(
        () => {
          if (this.closed) return;
          this.onRelisten();
          for (const resolve of this.waiting.splice(0)) resolve();
        },
        () => {
          this.delay = Math.min(this.delay * 2, RECONNECT_MAX_MS);
          if (!this.closed) this.reconnectLater();
        },
      );
    }, this.delay);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.client?.end().catch(() => {});
  }
}
