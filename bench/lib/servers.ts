/**
 * The servers under test, as started inside one process, all on 127.0.0.1:
 * - the real Strata app;
 * - the same app without its API layers (versioning, throttling), on the same database, to measure their cost;
 * - optionally the same app with a tiny budget for the project (LIMITED_PROJECT_LIMITS), on the same database,
 *   to measure how promptly requests over budget are refused (its budgets are its own, not the real app's);
 * - a bare Fastify app (no hooks, auth or database) whose one route returns whatever bytes it was given.
 * The child-process entry (`bench/server.ts`) and the in-process comparison both use this.
 *
 * Throttling stays on (its code runs) but with limits far above what the benchmark can reach: the benchmark
 * measures capacity, not the rate-limit policy.
 */
import Fastify from 'fastify';
import { loadConfig } from '../../src/config.js';
import type { Server as HttpServer } from 'node:http';
import { buildApp } from '../../src/app.js';
import { openStore } from '../../src/storage/open.js';
import { storeEnv } from './backend.js';
import { recordStore, type StatementRecorder } from './capture.js';

export const PROJECT = 'bench';

export interface Servers {
  apiOrigin: string;
  /** The same app without API layers (undefined when not started). */
  noLayersOrigin?: string;
  /** The same app with a tiny project budget (undefined when not started). */
  limitedOrigin?: string;
  /** The limited app's HTTP server (the benchmark times its responses from inside). */
  limitedServer?: HttpServer;
  bareOrigin: string;
  clientId: string;
  clientSecret: string;
  /** Records the SQL the server runs (undefined when BENCH_CAPTURE=0). */
  recorder?: StatementRecorder;
  setBarePayload(payload: string): void;
  close(): Promise<void>;
}

export const BENCH_SERVER_ENV: Record<string, string> = {
  STRATA_PROJECTS: PROJECT,
  STRATA_LOG_LEVEL: 'error',
  STRATA_PORT: '0',
  STRATA_RATE_LIMIT: '1000000000',
  STRATA_RATE_BURST: '1000000000',
  STRATA_CONCURRENCY_LIMIT: '1000000',
  STRATA_PRINCIPAL_RATE_LIMIT: '1000000000',
  STRATA_PRINCIPAL_RATE_BURST: '1000000000',
  STRATA_PRINCIPAL_CONCURRENCY_LIMIT: '1000000',
};

/** The budget of the project on the limited app: 100 requests per second, burst 100 (STRATA_PROJECT_LIMITS). */
export const LIMITED_PROJECT_LIMITS = { [PROJECT]: { project: { rate: 100, burst: 100 } } };

export async function startServers(dataDir: string, opts: { capture?: boolean; noLayers?: boolean; limited?: boolean } = {}): Promise<Servers> {
  // The backend under test (backend.ts): the SQLite file in dataDir, or the run's PostgreSQL database.
  const config = loadConfig([], { ...BENCH_SERVER_ENV, ...storeEnv(dataDir) });
  const db = openStore({ dataDir: config.dataDir, synchronous: config.synchronous, databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize });
  const recorder = opts.capture ? recordStore(db) : undefined;
  const strata = await buildApp(config, { store: db, logger: false });
  if (recorder) strata.services.reads = recorder.wrapReader(strata.services.reads);
  const api = await strata.app.listen({ host: '127.0.0.1', port: 0 });

  // `apiLayers: false` leaves out versioning and throttling (an option meant for this measurement).
  const noLayers = opts.noLayers ? await buildApp(config, { store: db, logger: false, apiLayers: false }) : undefined;
  const noLayersOrigin = noLayers ? await noLayers.app.listen({ host: '127.0.0.1', port: 0 }) : undefined;

  const limitedConfig = opts.limited
    ? loadConfig([], { ...BENCH_SERVER_ENV, ...storeEnv(dataDir), STRATA_PROJECT_LIMITS: JSON.stringify(LIMITED_PROJECT_LIMITS) })
    : undefined;
  const limited = limitedConfig ? await buildApp(limitedConfig, { store: db, logger: false }) : undefined;
  const limitedOrigin = limited ? await limited.app.listen({ host: '127.0.0.1', port: 0 }) : undefined;

  let payload = '{}';
  const bare = Fastify({ logger: false });
  bare.get('/bare/:id', (_req, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8').send(payload);
  });
  const bareOrigin = await bare.listen({ host: '127.0.0.1', port: 0 });

  return {
    apiOrigin: api,
    noLayersOrigin,
    limitedOrigin,
    limitedServer: limited?.app.server,
    bareOrigin,
    clientId: strata.idp.devClient.clientId,
    clientSecret: strata.idp.devClient.secret,
    recorder,
    setBarePayload(p) {
      payload = p;
    },
    async close() {
      await bare.close();
      await limited?.close();
      await noLayers?.close();
      await strata.close();
      await db.close();
    },
  };
}
