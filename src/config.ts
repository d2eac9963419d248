/**
 * One typed configuration object, from command-line flags, then environment variables, then defaults. The
 * settings of the server are declared here; an area declares its own as a section (`ConfigSection`), which
 * the composition root passes in, so that this module knows no area.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { ADDRESS_ALLOWANCES, type AddressAllowance } from './http/address-policy.js';
import type { OutboundConfig } from './http/outbound.js';
import { parseBlobUrl, type BlobSettings } from './storage/blobs/open.js';

export interface Config {
  host: string;
  port: number;
  /** Directory of the embedded store, or `:memory:` for a throwaway in-memory store. */
  dataDir: string;
  /** A PostgreSQL database to use instead of the embedded store. */
  databaseUrl?: string;
  /** A read replica of that database, for list, search and aggregate reads. */
  databaseReadUrl?: string;
  /** Connections each PostgreSQL pool keeps. */
  databasePoolSize: number;
  /** Serve `GET /metrics` (Prometheus text format). */
  metrics: boolean;
  /** Projects created on start (if missing). */
  projects: string[];
  /** Public origin of this server: the issuer of built-in tokens and the base of printed URLs. */
  publicUrl: string;
  devClientSecret?: string;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  /** Largest body of a request to a route outside the project operations (the token endpoints among them), in bytes. */
  unauthenticatedBodyLimit: number;
  /** Deepest nesting of arrays and objects in a JSON request body. */
  jsonMaxDepth: number;
  /** Time a client has to send a request's headers, in milliseconds. */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request (headers and body), in milliseconds. */
  requestTimeoutMs: number;
  /** Connections one client address may hold open at once; 0 for no cap. */
  maxConnectionsPerAddress: number;
  /** Proxies (addresses, CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`) whose X-Forwarded-For names the client. */
  trustProxy: string[];
  /** Browser origins (exact `scheme://host[:port]`) allowed to call the API; none turns CORS off. */
  corsOrigins: string[];
  /** Failed requests to the built-in token endpoint allowed per client id and per client address. */
  tokenFailures: TokenFailureLimits;
  logLevel: string;
  synchronous: 'normal' | 'full';
  /** Worker threads that read list pages, each with its own connection; 0 reads on the main thread. */
  readWorkers: number;
  throttle: ThrottleConfig;
  /** Clients of the built-in identity provider besides the admin, each with the groups its tokens carry. */
  clients: BuiltInClientConfig[];
  /** Shortest time between two fetches of one identity provider's keys (refreshes on an unknown key id). */
  jwksRefreshIntervalMs: number;
  /** Calls to other servers (identity providers): deadline, size limit, address policy. */
  outbound: OutboundConfig;
  /** Origins besides the issuer's own where its discovery document may place `jwks_uri` and `token_endpoint`; `*` for any. */
  oidcExtraOrigins: string[] | '*';
  /** The areas' sections, each loaded from its settings. */
  sections: SectionValues;
  /** Where blob contents are kept (storage/blobs/open.ts). */
  blobs: BlobSettings;
}

/** An extra client of the built-in identity provider (STRATA_CLIENTS), for trying scoped access locally. */
export interface BuiltInClientConfig {
  clientId: string;
  clientSecret: string;
  /** Values of the tokens' `groups` claim; groups whose `sourceId` is one of them apply to the client. */
  groups: string[];
}

/** One request-rate budget (token bucket) and one concurrency maximum, for a project or for a principal. */
export interface ScopeLimits {
  /** Requests per second, refilled continuously. */
  rate: number;
  /** Bucket size: how many requests may arrive at once after a quiet period. */
  burst: number;
  /** Requests in flight at the same time. */
  concurrency: number;
}

export interface ThrottleLimits {
  /** Budget of a whole project, shared by every principal calling it. */
  project: ScopeLimits;
  /** Budget of one principal within one project. */
  principal: ScopeLimits;
}

/** A per-project override: any subset of the limits. A `rate` without `burst` gets a burst of twice the rate. */
export interface LimitsOverride {
  project?: Partial<ScopeLimits>;
  principal?: Partial<ScopeLimits>;
}

export interface ThrottleConfig {
  /** Off only to measure the cost of throttling or to load-test the rest; on by default. */
  enabled: boolean;
  limits: ThrottleLimits;
  /** Overrides by project name, from STRATA_PROJECT_LIMITS; they win over the override stored with the project. */
  projectLimits: Record<string, LimitsOverride>;
  /** When set, budgets are shared through this Redis by every process that uses it; otherwise they are per process. */
  redisUrl?: string;
}

/** A token bucket of failed attempts: `burst` at once, then `perMinute`. */
export interface TokenFailureLimits {
  burst: number;
  perMinute: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/** Generous enough that one developer never meets them; operators tune them per deployment and project. */
export const DEFAULT_LIMITS: ThrottleLimits = {
  project: { rate: 20_000, burst: 40_000, concurrency: 1000 },
  principal: { rate: 10_000, burst: 20_000, concurrency: 500 },
};
/** Enough for any request the API takes (an advanced filter 10 levels deep nests about 25), far from what costs. */
export const DEFAULT_JSON_MAX_DEPTH = 64;

/**
 * Every setting, once: its flag (absent for the few read from the environment only), its environment
 * variable, what it sets, and its default. `default` is the text used when neither is given; `shown`
 * describes a default that depends on other settings or on the machine. `strata help` lists them from here.
 */
export interface Setting {
  flag?: string;
  env: string;
  meaning: string;
  default?: string;
  shown?: string;
}

const SETTINGS: readonly Setting[] = [
  { flag: '--port', env: 'STRATA_PORT', default: '4000', meaning: 'HTTP port' },
  { flag: '--host', env: 'STRATA_HOST', default: '127.0.0.1', meaning: 'interface to listen on (0.0.0.0 for all)' },
  { flag: '--public-url', env: 'STRATA_PUBLIC_URL', shown: 'http://localhost:<port>', meaning: "origin clients use; the built-in identity provider's issuer and audience" },
  { flag: '--projects', env: 'STRATA_PROJECTS', default: 'dev', meaning: 'comma-separated projects to create on start if missing' },
  { flag: '--log-level', env: 'STRATA_LOG_LEVEL', default: 'warn', meaning: 'pino log level' },
  { flag: '--metrics', env: 'STRATA_METRICS', default: 'on', meaning: 'GET /metrics in Prometheus text format: on or off' },
  { flag: '--data-dir', env: 'STRATA_DATA_DIR', default: './data', meaning: 'directory of the embedded store (strata.db); :memory: for a throwaway store' },
  { flag: '--sync', env: 'STRATA_SYNC', default: 'normal', meaning: 'normal: an answered write survives a killed process; full: also a power loss' },
  { flag: '--read-workers', env: 'STRATA_READ_WORKERS', shown: 'cores, at most 4', meaning: 'worker threads that read list pages; 0 reads on the main thread' },
  { flag: '--database-url', env: 'STRATA_DATABASE_URL', shown: 'none (the embedded store)', meaning: 'PostgreSQL database to use instead of the embedded store' },
  { flag: '--database-read-url', env: 'STRATA_DATABASE_READ_URL', shown: 'none', meaning: 'a read replica of that database, for list, search and aggregate reads' },
  { flag: '--database-pool-size', env: 'STRATA_DATABASE_POOL_SIZE', default: '10', meaning: 'connections each PostgreSQL pool keeps open' },
  { env: 'STRATA_DEV_CLIENT_SECRET', shown: 'generated once, kept in the store', meaning: 'secret of the administrator client strata-admin' },
  { flag: '--clients', env: 'STRATA_CLIENTS', shown: 'none', meaning: 'more clients of the built-in identity provider, with their groups claim (JSON array, or @file)' },
  { flag: '--jwks-refresh-interval', env: 'STRATA_JWKS_REFRESH_INTERVAL_MS', default: '30000', meaning: "least time between two fetches of an identity provider's keys, in ms" },
  { flag: '--body-limit', env: 'STRATA_BODY_LIMIT', default: String(20 * 1024 * 1024), meaning: 'largest request body in bytes, after decoding a compressed one' },
  { flag: '--unauthenticated-body-limit', env: 'STRATA_UNAUTHENTICATED_BODY_LIMIT', default: '8192', meaning: 'largest body of a route outside the project operations (the token endpoints)' },
  { flag: '--json-max-depth', env: 'STRATA_JSON_MAX_DEPTH', default: String(DEFAULT_JSON_MAX_DEPTH), meaning: 'deepest nesting of arrays and objects in a JSON body' },
  { flag: '--headers-timeout', env: 'STRATA_HEADERS_TIMEOUT_MS', shown: '10000, at most the request timeout', meaning: "time to send a request's headers, in ms" },
  { flag: '--request-timeout', env: 'STRATA_REQUEST_TIMEOUT_MS', default: '30000', meaning: 'time to send a whole request, in ms' },
  { flag: '--max-connections-per-address', env: 'STRATA_MAX_CONNECTIONS_PER_ADDRESS', default: '256', meaning: 'open connections per client address; 0 for no cap' },
  { flag: '--trust-proxy', env: 'STRATA_TRUST_PROXY', shown: 'none', meaning: 'proxies whose X-Forwarded-For names the client: addresses, CIDR ranges, loopback, linklocal, uniquelocal' },
  { flag: '--cors-origins', env: 'STRATA_CORS_ORIGINS', shown: 'none (CORS off)', meaning: 'exact origins of browser applications allowed to call the API, comma-separated' },
  { flag: '--token-failure-burst', env: 'STRATA_TOKEN_FAILURE_BURST', default: '10', meaning: 'failed /oauth2/token requests at once, per client id and per address' },
  { flag: '--token-failure-rate', env: 'STRATA_TOKEN_FAILURE_RATE', default: '10', meaning: 'failed /oauth2/token requests a minute after the burst' },
  { flag: '--blob-url', env: 'STRATA_BLOB_URL', shown: '<data-dir>/blobs; the database with --data-dir :memory:', meaning: 'where file contents are kept: file:///path, database: (the database), or s3://bucket/prefix' },
  { flag: '--blob-endpoint', env: 'STRATA_BLOB_ENDPOINT', shown: 'AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, or AWS', meaning: 'address of an S3-compatible store, such as http://127.0.0.1:9000' },
  { flag: '--blob-path-style', env: 'STRATA_BLOB_PATH_STYLE', shown: 'on with an endpoint, off without', meaning: 'S3 requests with the bucket in the path rather than the host name: on or off' },
  { flag: '--throttle', env: 'STRATA_THROTTLE', default: 'on', meaning: 'request-rate and concurrency budgets: on, or off only for load tests' },
  { flag: '--rate-limit', env: 'STRATA_RATE_LIMIT', shown: String(DEFAULT_LIMITS.project.rate), meaning: 'requests per second per project' },
  { flag: '--rate-burst', env: 'STRATA_RATE_BURST', shown: `${DEFAULT_LIMITS.project.burst}, twice a rate that is set`, meaning: 'requests a project may send at once after a quiet period' },
  { flag: '--concurrency-limit', env: 'STRATA_CONCURRENCY_LIMIT', shown: String(DEFAULT_LIMITS.project.concurrency), meaning: 'requests in flight per project' },
  { flag: '--principal-rate-limit', env: 'STRATA_PRINCIPAL_RATE_LIMIT', shown: String(DEFAULT_LIMITS.principal.rate), meaning: 'requests per second per principal in a project' },
  { flag: '--principal-rate-burst', env: 'STRATA_PRINCIPAL_RATE_BURST', shown: `${DEFAULT_LIMITS.principal.burst}, twice a rate that is set`, meaning: 'requests a principal may send at once' },
  { flag: '--principal-concurrency-limit', env: 'STRATA_PRINCIPAL_CONCURRENCY_LIMIT', shown: String(DEFAULT_LIMITS.principal.concurrency), meaning: 'requests in flight per principal in a project' },
  { flag: '--project-limits', env: 'STRATA_PROJECT_LIMITS', shown: 'none', meaning: 'per-project overrides of the budgets, as JSON keyed by project' },
  { flag: '--redis-url', env: 'STRATA_REDIS_URL', shown: 'none', meaning: 'share the budgets between processes through this Redis (redis:// or rediss://)' },
  { flag: '--outbound-allow', env: 'STRATA_OUTBOUND_ALLOW', shown: 'none (public addresses only)', meaning: 'further address kinds Strata may call: loopback, private, comma-separated' },
  { flag: '--outbound-deadline', env: 'STRATA_OUTBOUND_DEADLINE_MS', default: '5000', meaning: 'longest time for a whole outbound call, in ms' },
  { flag: '--outbound-max-bytes', env: 'STRATA_OUTBOUND_MAX_BYTES', default: String(1024 * 1024), meaning: 'largest response body an outbound call reads' },
  { flag: '--oidc-extra-origins', env: 'STRATA_OIDC_EXTRA_ORIGINS', shown: 'none', meaning: "origins besides the issuer's where its discovery document may place keys and token endpoint (comma-separated, or *)" },
];

/**
 * A part of the configuration that an area declares: its settings (in `strata help`, as flags and variables)
 * and how their text becomes its values. `load` reads each setting's text with `text` (its declared default
 * where none was given) and names it in messages with `name` ("STRATA_X (--x)").
 */
export interface ConfigSection<T> {
  readonly name: string;
  readonly settings: readonly Setting[];
  load(text: (env: string) => string | undefined, name: (env: string) => string): T;
}

/** The loaded sections, by their declaration; a section not loaded (an app built without its settings) has its defaults. */
export interface SectionValues {
  of<T>(section: ConfigSection<T>): T;
}

/** Section values from what was loaded, the defaults of any other section. */
export function sectionValues(loaded: ReadonlyMap<ConfigSection<unknown>, unknown> = new Map()): SectionValues {
  const defaults = new Map<ConfigSection<unknown>, unknown>();
  return {
    of<T>(section: ConfigSection<T>): T {
      if (loaded.has(section)) return loaded.get(section) as T;
      if (!defaults.has(section)) defaults.set(section, loadSection(section, {}));
      return defaults.get(section) as T;
    },
  };
}

function loadSection<T>(section: ConfigSection<T>, values: Env): T {
  return section.load(
    (env) => values[env] ?? section.settings.find((s) => s.env === env)?.default,
    (env) => settingName(section.settings, env),
  );
}

/** How messages name a setting: its variable, and its flag when it has one. */
function settingName(settings: readonly Setting[], env: string): string {
  const flag = settings.find((s) => s.env === env)?.flag;
  return flag ? `${env} (${flag})` : env;
}

const DEFAULTS: Env = Object.fromEntries(SETTINGS.flatMap((s) => (s.default === undefined ? [] : [[s.env, s.default]])));

/** A setting's text from its flag or variable, else its declared default. */
function setting(values: Env, env: string): string {
  const value = values[env] ?? DEFAULTS[env];
  if (value === undefined) throw new Error(`${env} declares no default`);
  return value;
}

/** A server setting's name in messages (see `settingName`). */
const named = (env: string): string => settingName(SETTINGS, env);

/** The settings as `strata help` lists them, the server's and then the sections': each flag with its variable, what it sets and its default. */
export function configHelp(sections: readonly ConfigSection<unknown>[] = []): string {
  return [...SETTINGS, ...sections.flatMap((s) => s.settings)]
    .map((s) => `  ${s.flag ? `${s.flag} (${s.env})` : `${s.env} (environment only)`}\n      ${s.meaning} (default: ${s.default ?? s.shown})`)
    .join('\n');
}

const PROJECT_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
const MAX_RATE = 1e9;
const MAX_COUNT = 1e9;

export function integer(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

// Values from flags and environment are text; values from JSON must already be numbers.
function positiveRate(name: string, raw: string | number, shown: unknown = raw, unit = 'requests per second'): number {
  const n = typeof raw === 'string' ? (/^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN) : raw;
  if (!Number.isFinite(n) || n <= 0 || n > MAX_RATE) {
    throw new ConfigError(`${name} must be a number of ${unit} above 0 and at most ${MAX_RATE}, got ${show(shown)}`);
  }
  return n;
}

export function count(name: string, raw: string | number, what: string, shown: unknown = raw): number {
  const n = typeof raw === 'string' ? (/^\d+$/.test(raw.trim()) ? Number(raw) : NaN) : raw;
  if (!Number.isInteger(n) || n < 1 || n > MAX_COUNT) {
    throw new ConfigError(`${name} must be a whole number of ${what} from 1 to ${MAX_COUNT}, got ${show(shown)}`);
  }
  return n;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

export function onOff(name: string, raw: string): boolean {
  if (raw !== 'on' && raw !== 'off') throw new ConfigError(`${name} must be "on" or "off", got "${raw}"`);
  return raw === 'on';
}

/** A PostgreSQL connection URL, checked: `postgres://` or `postgresql://` with a host and a database name. */
function databaseUrl(name: string, raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const url = parseUrl(raw);
  const shown = url ? `${url.protocol}//${url.host}${url.pathname}` : '(not a URL)';
  if (!url || !['postgres:', 'postgresql:'].includes(url.protocol) || !url.hostname || url.pathname.length < 2) {
    throw new ConfigError(`${name} must be a PostgreSQL URL such as postgres://user:password@host:5432/strata, got ${shown}`);
  }
  return raw;
}

function show(raw: unknown): string {
  return typeof raw === 'string' ? `"${raw}"` : JSON.stringify(raw) ?? String(raw);
}

/** The burst that goes with a rate when none is given: two seconds' worth, at least one request. */
export function defaultBurst(rate: number): number {
  return Math.max(1, Math.ceil(rate * 2));
}

const SCOPE_KEYS = ['rate', 'burst', 'concurrency'];

/** Checks one per-project override (from STRATA_PROJECT_LIMITS or a project's stored config); `where` names it in messages. */
export function parseLimitsOverride(raw: unknown, where: string): LimitsOverride {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${where} must be an object such as {"project": {"rate": 100, "concurrency": 20}, "principal": {"rate": 50}}, got ${show(raw)}`);
  }
  const out: LimitsOverride = {};
  for (const [scope, value] of Object.entries(raw)) {
    if (scope !== 'project' && scope !== 'principal') throw new ConfigError(`${where}: unknown key "${scope}"; expected "project" or "principal"`);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ConfigError(`${where}.${scope} must be an object with any of ${SCOPE_KEYS.join(', ')}, got ${show(value)}`);
    }
    const limits: Partial<ScopeLimits> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const name = `${where}.${scope}.${key}`;
      const n = typeof v === 'number' ? v : NaN;
      if (key === 'rate') limits.rate = positiveRate(name, n, v);
      else if (key === 'burst') limits.burst = count(name, n, 'requests', v);
      else if (key === 'concurrency') limits.concurrency = count(name, n, 'concurrent requests', v);
      else throw new ConfigError(`${where}.${scope}: unknown key "${key}"; expected ${SCOPE_KEYS.join(', ')}`);
    }
    out[scope] = limits;
  }
  return out;
}

/** Applies an override on top of a base; a new rate without a burst brings its own default burst. */
export function applyLimitsOverride(base: ThrottleLimits, o: LimitsOverride | undefined): ThrottleLimits {
  if (!o) return base;
  const scope = (b: ScopeLimits, p: Partial<ScopeLimits> | undefined): ScopeLimits =>
    p
      ? {
          rate: p.rate ?? b.rate,
          burst: p.burst ?? (p.rate !== undefined ? defaultBurst(p.rate) : b.burst),
          concurrency: p.concurrency ?? b.concurrency,
        }
      : b;
  return { project: scope(base.project, o.project), principal: scope(base.principal, o.principal) };
}

function loadThrottleConfig(values: Env): ThrottleConfig {
  const onOff = setting(values, 'STRATA_THROTTLE');
  if (onOff !== 'on' && onOff !== 'off') throw new ConfigError(`STRATA_THROTTLE (--throttle) must be "on" or "off", got "${onOff}"`);
  const scope = (prefix: string, flag: string, d: ScopeLimits): ScopeLimits => {
    const rateRaw = values[`STRATA_${prefix}RATE_LIMIT`];
    const burstRaw = values[`STRATA_${prefix}RATE_BURST`];
    const concurrencyRaw = values[`STRATA_${prefix}CONCURRENCY_LIMIT`];
    const rate = rateRaw === undefined ? d.rate : positiveRate(`STRATA_${prefix}RATE_LIMIT (--${flag}rate-limit)`, rateRaw);
    return {
      rate,
      burst:
        burstRaw === undefined
          ? rateRaw === undefined
            ? d.burst
            : defaultBurst(rate)
          : count(`STRATA_${prefix}RATE_BURST (--${flag}rate-burst)`, burstRaw, 'requests'),
      concurrency:
        concurrencyRaw === undefined
          ? d.concurrency
          : count(`STRATA_${prefix}CONCURRENCY_LIMIT (--${flag}concurrency-limit)`, concurrencyRaw, 'concurrent requests'),
    };
  };
  const limits = { project: scope('', '', DEFAULT_LIMITS.project), principal: scope('PRINCIPAL_', 'principal-', DEFAULT_LIMITS.principal) };

  const projectLimits: Record<string, LimitsOverride> = {};
  const rawProjects = values.STRATA_PROJECT_LIMITS;
  if (rawProjects !== undefined && rawProjects.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawProjects);
    } catch (err) {
      throw new ConfigError(`STRATA_PROJECT_LIMITS (--project-limits) is not valid JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError('STRATA_PROJECT_LIMITS (--project-limits) must be a JSON object keyed by project name, such as {"dev": {"project": {"rate": 100}}}');
    }
    for (const [project, o] of Object.entries(parsed)) {
      if (!PROJECT_NAME.test(project)) throw new ConfigError(`${named('STRATA_PROJECT_LIMITS')}: "${project}" is not a valid project name`);
      projectLimits[project] = parseLimitsOverride(o, `${named('STRATA_PROJECT_LIMITS')}: ${project}`);
    }
  }

  const redisUrl = values.STRATA_REDIS_URL || undefined;
  if (redisUrl !== undefined) {
    const url = parseUrl(redisUrl);
    if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) {
      throw new ConfigError(`STRATA_REDIS_URL (--redis-url) must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379, got "${redisUrl}"`);
    }
  }
  return { enabled: onOff === 'on', limits, projectLimits, redisUrl };
}

/** The request and headers timeouts: the headers' may not be longer than the whole request's. */
function loadTimeouts(values: Env): { headersTimeoutMs: number; requestTimeoutMs: number } {
  const requestName = 'STRATA_REQUEST_TIMEOUT_MS (--request-timeout)';
  const requestTimeoutMs = integer(requestName, setting(values, 'STRATA_REQUEST_TIMEOUT_MS'), 50, 3_600_000);
  const headersRaw = values.STRATA_HEADERS_TIMEOUT_MS;
  if (headersRaw === undefined) return { requestTimeoutMs, headersTimeoutMs: Math.min(10_000, requestTimeoutMs) };
  const headersTimeoutMs = integer('STRATA_HEADERS_TIMEOUT_MS (--headers-timeout)', headersRaw, 50, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`STRATA_HEADERS_TIMEOUT_MS (--headers-timeout) must not be longer than ${requestName}: ${headersTimeoutMs} > ${requestTimeoutMs}`);
  }
  return { headersTimeoutMs, requestTimeoutMs };
}

/** STRATA_CORS_ORIGINS: exact origins, comma-separated; a wildcard would hand the API to every web page. */
function loadCorsOrigins(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const where = 'STRATA_CORS_ORIGINS (--cors-origins)';
  const origins = raw
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of origins) {
    if (origin.includes('*')) {
      throw new ConfigError(`${where}: "${origin}" is a wildcard; list each origin browser applications are served from, such as https://app.example.com`);
    }
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      throw new ConfigError(
        `${where}: "${origin}" is not an origin as browsers send it; write the scheme, lower-case host and port only, such as https://app.example.com or http://localhost:3000`,
      );
    }
  }
  return [...new Set(origins)];
}

const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** STRATA_TRUST_PROXY: the proxies in front of Strata; only their X-Forwarded-For is believed, so no client can pick its address. */
function loadTrustProxy(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!PROXY_RANGES.has(entry) && (family === 0 || !prefixOk || rest.length > 0)) {
      throw new ConfigError(
        `STRATA_TRUST_PROXY (--trust-proxy): "${entry}" is not an address, a CIDR range (10.0.0.0/8) or one of ${[...PROXY_RANGES].join(', ')}`,
      );
    }
  }
  return entries;
}

/** STRATA_BLOB_URL and, for an S3-compatible store, its address (STRATA_BLOB_ENDPOINT, or the AWS SDK's AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) and addressing. */
function loadBlobSettings(values: Env): BlobSettings {
  const raw = values.STRATA_BLOB_URL || undefined;
  let location: BlobSettings['location'];
  try {
    location = raw === undefined ? undefined : parseBlobUrl(raw);
  } catch (err) {
    throw new ConfigError(`STRATA_BLOB_URL (--blob-url): ${(err as Error).message}`);
  }
  const [endpointName, endpoint] = (
    [
      ['STRATA_BLOB_ENDPOINT (--blob-endpoint)', values.STRATA_BLOB_ENDPOINT],
      ['AWS_ENDPOINT_URL_S3', values.AWS_ENDPOINT_URL_S3],
      ['AWS_ENDPOINT_URL', values.AWS_ENDPOINT_URL],
    ] as const
  ).find(([, v]) => v) ?? [undefined, undefined];
  if (endpoint !== undefined) {
    const url = parseUrl(endpoint);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ConfigError(`${endpointName} must be an http:// or https:// URL such as http://127.0.0.1:9000, got "${endpoint}"`);
  }
  const pathStyle = values.STRATA_BLOB_PATH_STYLE === undefined ? undefined : onOff('STRATA_BLOB_PATH_STYLE (--blob-path-style)', values.STRATA_BLOB_PATH_STYLE);
  return { location, endpoint, pathStyle };
}

const CLIENTS_EXAMPLE = '[{"clientId": "reader", "clientSecret": "a-long-secret", "groups": ["readers"]}]';

/** STRATA_CLIENTS: a JSON array of clients, or `@file` naming a file that holds one. */
function loadClients(raw: string | undefined): BuiltInClientConfig[] {
  if (raw === undefined || raw.trim() === '') return [];
  const where = 'STRATA_CLIENTS (--clients)';
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(resolve(raw.slice(1)), 'utf8');
    } catch (err) {
      throw new ConfigError(`${where}: cannot read ${raw.slice(1)}: ${(err as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${where} is not valid JSON: ${(err as Error).message}; expected for example ${CLIENTS_EXAMPLE}`);
  }
  if (!Array.isArray(parsed)) throw new ConfigError(`${where} must be a JSON array such as ${CLIENTS_EXAMPLE}`);
  const seen = new Set<string>();
  return parsed.map((c: unknown, i) => {
    const at = `${where}[${i}]`;
    if (typeof c !== 'object' || c === null || Array.isArray(c)) throw new ConfigError(`${at} must be an object such as ${CLIENTS_EXAMPLE.slice(1, -1)}`);
    const { clientId, clientSecret, groups = [], ...rest } = c as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length) throw new ConfigError(`${at}: unknown key "${unknown[0]}"; expected clientId, clientSecret, groups`);
    if (typeof clientId !== 'string' || !/^[\w.@-]{1,128}$/.test(clientId)) {
      throw new ConfigError(`${at}.clientId must be 1 to 128 letters, digits, '_', '.', '@' or '-', got ${show(clientId)}`);
    }
    if (clientId === 'strata-admin') throw new ConfigError(`${at}.clientId: "strata-admin" is the built-in administrator; choose another id`);
    if (seen.has(clientId)) throw new ConfigError(`${at}.clientId: "${clientId}" is configured twice`);
    seen.add(clientId);
    if (typeof clientSecret !== 'string' || clientSecret.length < 8) throw new ConfigError(`${at}.clientSecret must be a string of at least 8 characters`);
    if (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string' && g.length > 0)) {
      throw new ConfigError(`${at}.groups must be an array of group source ids (non-empty strings), got ${show(groups)}`);
    }
    return { clientId, clientSecret, groups: groups as string[] };
  });
}

function loadOutboundConfig(values: Env): OutboundConfig {
  const allow = (values.STRATA_OUTBOUND_ALLOW ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  for (const a of allow) {
    if (!(ADDRESS_ALLOWANCES as readonly string[]).includes(a)) {
      throw new ConfigError(`STRATA_OUTBOUND_ALLOW (--outbound-allow): unknown address kind "${a}"; expected a comma-separated list of ${ADDRESS_ALLOWANCES.join(', ')}`);
    }
  }
  return {
    allow: [...new Set(allow as AddressAllowance[])],
    deadlineMs: integer('STRATA_OUTBOUND_DEADLINE_MS (--outbound-deadline)', setting(values, 'STRATA_OUTBOUND_DEADLINE_MS'), 100, 120_000),
    maxBytes: integer('STRATA_OUTBOUND_MAX_BYTES (--outbound-max-bytes)', setting(values, 'STRATA_OUTBOUND_MAX_BYTES'), 1024, 64 * 1024 * 1024),
  };
}

/** STRATA_OIDC_EXTRA_ORIGINS: `*`, or comma-separated origins such as https://www.googleapis.com. */
function loadExtraOrigins(raw: string | undefined): string[] | '*' {
  if (raw?.trim() === '*') return '*';
  return (raw ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      const url = parseUrl(o);
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== o.replace(/\/$/, '')) {
        throw new ConfigError(`STRATA_OIDC_EXTRA_ORIGINS (--oidc-extra-origins): "${o}" is not an origin (scheme, host and port only, such as https://keys.example.com), nor "*"`);
      }
      return url.origin;
    });
}

/** The configuration from `argv` and `env`, with the sections of the areas served. */
export function loadConfig(argv: readonly string[], env: Env = process.env, sections: readonly ConfigSection<unknown>[] = []): Config {
  const flags = new Map([...SETTINGS, ...sections.flatMap((s) => s.settings)].flatMap((s) => (s.flag ? [[s.flag, s.env] as const] : [])));
  const values: Env = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const name = flags.get(flag);
    if (!name) throw new ConfigError(`unknown option ${flag}; \`strata help\` lists the options`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`${flag} needs a value`);
    values[name] = value;
  }

  const port = integer('STRATA_PORT (--port)', setting(values, 'STRATA_PORT'), 0, 65535);
  const host = setting(values, 'STRATA_HOST');
  const dataDirRaw = setting(values, 'STRATA_DATA_DIR');
  const dataDir = dataDirRaw === ':memory:' ? dataDirRaw : resolve(dataDirRaw);
  const projects = setting(values, 'STRATA_PROJECTS')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const p of projects) {
    if (!PROJECT_NAME.test(p)) {
      throw new ConfigError(`${named('STRATA_PROJECTS')}: "${p}" is not a valid project name (lower-case letters, digits and '-', at most 64)`);
    }
  }
  if (values.STRATA_DATABASE_READ_URL && !values.STRATA_DATABASE_URL) {
    throw new ConfigError('STRATA_DATABASE_READ_URL (--database-read-url) is a replica of STRATA_DATABASE_URL (--database-url), which is not set');
  }
  const synchronous = setting(values, 'STRATA_SYNC');
  if (synchronous !== 'normal' && synchronous !== 'full') throw new ConfigError(`${named('STRATA_SYNC')} must be "normal" or "full", got "${synchronous}"`);
  return {
    host,
    port,
    dataDir,
    databaseUrl: databaseUrl('STRATA_DATABASE_URL (--database-url)', values.STRATA_DATABASE_URL),
    databaseReadUrl: databaseUrl('STRATA_DATABASE_READ_URL (--database-read-url)', values.STRATA_DATABASE_READ_URL),
    databasePoolSize: integer('STRATA_DATABASE_POOL_SIZE (--database-pool-size)', setting(values, 'STRATA_DATABASE_POOL_SIZE'), 1, 1000),
    metrics: onOff('STRATA_METRICS (--metrics)', setting(values, 'STRATA_METRICS')),
    projects,
    publicUrl: (values.STRATA_PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    devClientSecret: values.STRATA_DEV_CLIENT_SECRET || undefined,
    bodyLimit: integer(named('STRATA_BODY_LIMIT'), setting(values, 'STRATA_BODY_LIMIT'), 1024, 1024 * 1024 * 1024),
    logLevel: setting(values, 'STRATA_LOG_LEVEL'),
    synchronous,
    readWorkers: integer('STRATA_READ_WORKERS (--read-workers)', values.STRATA_READ_WORKERS ?? String(Math.min(4, availableParallelism())), 0, 64),
    throttle: loadThrottleConfig(values),
    clients: loadClients(values.STRATA_CLIENTS),
    jwksRefreshIntervalMs: integer('STRATA_JWKS_REFRESH_INTERVAL_MS (--jwks-refresh-interval)', setting(values, 'STRATA_JWKS_REFRESH_INTERVAL_MS'), 0, 86_400_000),
    outbound: loadOutboundConfig(values),
    oidcExtraOrigins: loadExtraOrigins(values.STRATA_OIDC_EXTRA_ORIGINS),
    sections: sectionValues(new Map(sections.map((section) => [section, loadSection(section, values)]))),
    blobs: loadBlobSettings(values),
    unauthenticatedBodyLimit: integer(
      'STRATA_UNAUTHENTICATED_BODY_LIMIT (--unauthenticated-body-limit)',
      setting(values, 'STRATA_UNAUTHENTICATED_BODY_LIMIT'),
      1024,
      1024 * 1024,
    ),
    jsonMaxDepth: integer('STRATA_JSON_MAX_DEPTH (--json-max-depth)', setting(values, 'STRATA_JSON_MAX_DEPTH'), 8, 1000),
    ...loadTimeouts(values),
    maxConnectionsPerAddress: integer('STRATA_MAX_CONNECTIONS_PER_ADDRESS (--max-connections-per-address)', setting(values, 'STRATA_MAX_CONNECTIONS_PER_ADDRESS'), 0, 1_000_000),
    corsOrigins: loadCorsOrigins(values.STRATA_CORS_ORIGINS),
    trustProxy: loadTrustProxy(values.STRATA_TRUST_PROXY),
    tokenFailures: {
      burst: count('STRATA_TOKEN_FAILURE_BURST (--token-failure-burst)', setting(values, 'STRATA_TOKEN_FAILURE_BURST'), 'failed attempts'),
      perMinute: positiveRate('STRATA_TOKEN_FAILURE_RATE (--token-failure-rate)', setting(values, 'STRATA_TOKEN_FAILURE_RATE'), undefined, 'failed attempts per minute'),
    },
  };
}
