import type { Access, Reach } from '../auth/access.js';
import type { SectionValues } from '../config.js';
import type { AuthRuntime } from '../auth/runtime.js';
import type { CursorCodec } from '../query/cursor.js';
import type { LinkSigner } from './links.js';
import type { OutboundClient } from './outbound.js';
import type { SelfCaller } from './self-calls.js';
import type { Queryable } from '../storage/store.js';
import type { Reader } from '../storage/read-pool.js';
import type { BlobStore } from '../storage/blobs/blob-store.js';
import type { ChangeFeed } from '../storage/changes.js';
import type { Clock } from '../storage/clock.js';
import type { Jobs } from '../storage/jobs/jobs.js';
import type { RequestLog } from './request-log.js';

/**
 * What route handlers reach: the store and the shared mechanisms built once per app. Each request gets its
 * own copy carrying `access`, so the shared query and write paths apply the request's scope.
 */
export interface Services {
  /** The store; inside a write, the handle of the write's transaction. */
  db: Queryable;
  /** Where list pages are read: worker threads with their own connections, or `db` in process. */
  reads: Reader;
  cursors: CursorCodec;
  /** Milliseconds since the epoch; injectable so tests can control time. */
  now(): number;
  /**
   * What this request may read and change, from the grants that satisfied its route's capability. Set on
   * every request; absent only outside requests (seeding, benchmarks), where everything is reachable.
   */
  access?: Access;
  /**
   * The data sets this request's principal owns (`datasetsAcl:OWNER`): writing into a write-protected data
   * set needs it. Absent, like `access`, only outside requests.
   */
  dataSetOwner?: Access;
  /**
   * What the request's principal can learn of each resource (see auth/access.ts): references to other items,
   * in filters and writes, resolve only among these. Absent where `access` is.
   */
  reach?: Reach;
  /** Blob contents (storage/blobs); present in the services of a built app. */
  blobs?: BlobStore;
  /** Recording changes and waiting for them (storage/changes.ts); present in the services of a built app. */
  changes?: ChangeFeed;
  /** The address clients reach this server at (`STRATA_PUBLIC_URL`), for the absolute URLs answers carry; present in a built app. */
  publicUrl?: string;
  /** Signs the links areas hand out (links.ts); present in the services of a built app. */
  links?: LinkSigner;
  /** Durable jobs and schedules (storage/jobs); present in the services of a built app. */
  jobs?: Jobs;
  /** The clock of `now`, with timers (deadlines of waits, job leases). */
  clock?: Clock;
  /** Identity providers, principals and sessions; present in the services of a built app. */
  auth?: AuthRuntime;
  /** The one client for calls to other servers; present in the services of a built app. */
  outbound?: OutboundClient;
  /** Calls of the API on a user's behalf (self-calls.ts); present in the services of a built app. */
  api?: SelfCaller;
  /** The project API's recent requests, for the web console; present in the services of a built app. */
  requestLog?: RequestLog;
  /** The areas' configuration sections (see config.ts `ConfigSection`); their defaults outside a built app. */
  settings: SectionValues;
}
