/**
 * Named locks a write transaction can hold until it ends, for rules that span rows (a hierarchy without
 * cycles, a schema migrated once). Where write transactions already run one at a time (SQLite) taking one
 * costs nothing; on PostgreSQL it is an advisory lock, so writes under the same name and key wait for each
 * other and all others go on.
 */
import type { Queryable } from './store.js';

const LOCKS = {
  /** Migrating the schema (key 0). */
  migration: 1,
  /** Changing the shape of a project's asset hierarchy (key: the project id). */
  assetHierarchy: 2,
  /** Seeding the definitions every project shares (key 0). */
  globalLayer: 3,
  /** Seeding the system nodes of a project (key: the project id). */
  systemNodes: 4,
  /**
   * Changing a project's data modeling schema (key: the project id): a change reads the containers and
   * views it rewrites whole, so two at once would lose one's change.
   */
  schema: 5,
  /**
   * The members of a project's data point subscriptions (key: the project id): held shared by writes of time
   * series, which bring their own memberships up to date, and exclusively by writes of subscriptions.
   */
  subscriptionMembers: 6,
  /** The calls running of one function (key: the function's id), counted against their maximum as one is added. */
  functionCalls: 7,
  /** The SAP writeback requests of a project pending or in progress (key: the project id), counted against their maximum as one is added. */
  sapWritebackRequests: 8,
} as const;

/** Holds the lock until the transaction ends; `shared` holders wait only for an exclusive one. */
export async function holdLock(db: Queryable, name: keyof typeof LOCKS, key = 0, mode: 'exclusive' | 'shared' = 'exclusive'): Promise<void> {
  const statement = mode === 'shared' ? db.dialect.shared(LOCKS[name], key) : db.dialect.exclusive(LOCKS[name], key);
  if (statement) await db.run(statement);
}
