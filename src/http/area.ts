/**
 * An area of the API, declared once: its operations, the tables it keeps and the steps that rewrite rows
 * earlier builds wrote there, and its section of the configuration. The composition root (src/app.ts) holds
 * the one list of areas and builds the server, the schema and the configuration from it; nothing below the
 * root knows which areas exist, so adding one touches that list and the area's own folder.
 */
import type { FastifyInstance } from 'fastify';
import type { AuthRuntime } from '../auth/runtime.js';
import type { BlobStore } from '../storage/blobs/blob-store.js';
import type { ConfigSection, SectionValues } from '../config.js';
import type { Jobs } from '../storage/jobs/jobs.js';
import type { DataStep } from '../storage/migrate.js';
import type { Reader } from '../storage/read-pool.js';
import type { TableDef } from '../storage/schema.js';
import type { Store } from '../storage/store.js';
import type { CursorCodec } from '../query/cursor.js';
import type { LinkRoute } from './links.js';
import type { OutboundClient } from './outbound.js';
import type { SelfCaller } from './self-calls.js';
import type { ApiRoute } from './route.js';

/** What an area's work beside requests runs on: the app's job runner, its store and its reads. */
export interface AreaRuntime {
  jobs: Jobs;
  store: Store;
  reads: Reader;
  now(): number;
  /** Calls of the API on a user's behalf, with the token or session they handed over (self-calls.ts). */
  api: SelfCaller;
  auth: AuthRuntime;
  blobs: BlobStore;
  /** The one client for calls to other servers (outbound.ts). */
  outbound: OutboundClient;
  /** The origin clients reach this API at (STRATA_PUBLIC_URL). */
  publicUrl: string;
  /** The API's cursors (query/cursor.ts), for pages served outside the project API. */
  cursors: CursorCodec;
  /** The areas' configuration sections. */
  settings: SectionValues;
}

export interface Area {
  /** What the area serves, as docs and messages name it. */
  readonly name: string;
  readonly routes: readonly ApiRoute[];
  /** Signed links it serves (links.ts): addresses that need no token, outside the project API. */
  readonly links?: readonly LinkRoute[];
  readonly tables?: readonly TableDef[];
  /** Data steps of the schema's migrations (storage/migrate.ts) over the area's tables. */
  readonly steps?: readonly DataStep[];
  /** The area's settings, read by its code through `services.settings`. */
  readonly config?: ConfigSection<unknown>;
  /** Registers the handlers of the job kinds the area's requests start (storage/jobs), once per app. */
  readonly registerJobs?: (runtime: AreaRuntime) => void;
  /**
   * Registers operations outside the project API (the identity service's `/api/v1/orgs/...`), which take
   * care of their own authentication; once per app.
   */
  readonly serve?: (app: FastifyInstance, runtime: AreaRuntime) => Promise<void>;
}
