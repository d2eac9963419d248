/**
 * Dated API versions. A request names its version with `svc-version: YYYYMMDD`, optionally suffixed `-beta`
 * or `-alpha` for those channels (`cdf-version` is accepted as an alias: existing clients send that name).
 * The forms existing clients send besides are accepted too: a bare `beta` or `alpha` (the newest release
 * of that channel) and the legacy `V` + date (the newest stable release).
 * Without the header a request gets the latest stable version. The version selects dated behaviour from
 * `dated-changes.ts`; each operation's channel (`ApiRoute.channel`) decides whether the request may call it.
 *
 * Every version resolves to one of a handful of shared, immutable `ApiVersion` objects (one per release date
 * and channel), so the per-request cost is a header read and, for a header value seen before, a map lookup.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RELEASES, FIRST_VERSION, valuesAt, type DatedKey, type DatedValue, type DatedValues } from './dated-changes.js';
import { badRequest } from './errors.js';
import { operationName, type ApiRoute, type Channel } from './route.js';

export const VERSION_HEADER = 'svc-version';
/** The name the reference service's clients use for the same header. */
export const VERSION_HEADER_ALIAS = 'cdf-version';

declare module 'fastify' {
  interface FastifyRequest {
    apiVersion: ApiVersion | null;
  }
}

/** Each channel also reaches the operations of the channels before it: alpha includes beta, beta includes stable. */
const CHANNEL_RANK: Record<Channel, number> = { stable: 0, beta: 1, alpha: 2 };

export class ApiVersion {
  /** The release whose behaviour applies: the newest release date not after the requested date. */
  readonly release: string;
  readonly channel: Channel;
  /** What the response's `svc-version` header says: the release, with the channel suffix unless stable. */
  readonly name: string;
  private readonly values: DatedValues;

  constructor(release: string, channel: Channel) {
    this.release = release;
    this.channel = channel;
    this.name = channel === 'stable' ? release : `${release}-${channel}`;
    this.values = valuesAt(release);
  }

  /** The value a dated behaviour has in this version. */
  at<K extends DatedKey>(key: K): DatedValue<K> {
    return this.values[key];
  }

  /** Whether this version may call an operation of the given channel. */
  reaches(channel: Channel): boolean {
    return CHANNEL_RANK[this.channel] >= CHANNEL_RANK[channel];
  }
}

const CHANNELS: readonly Channel[] = ['stable', 'beta', 'alpha'];
const BY_RELEASE = new Map(RELEASES.map((r) => [r, Object.fromEntries(CHANNELS.map((c) => [c, new ApiVersion(r, c)])) as Record<Channel, ApiVersion>]));
const LATEST_RELEASE = RELEASES[RELEASES.length - 1];

/** What a request without a version header gets. */
export const LATEST_STABLE = BY_RELEASE.get(LATEST_RELEASE)!.stable;

const FORMAT = 'YYYYMMDD, optionally followed by -beta or -alpha (for example 20250926 or 20250926-beta), or beta, alpha, or the legacy V followed by YYYYMMDD';
const SHAPE = /^(\d{4})(\d{2})(\d{2})(?:-(beta|alpha))?$/;
const LEGACY = /^V(\d{4})(\d{2})(\d{2})$/;

/** Versions resolved from header values seen before; bounded, since clients choose the values. */
const seen = new Map<string, ApiVersion>();
const SEEN_MAX = 1024;

/** Resolves a header value to its version, or throws a 400 naming the header and the expected format. */
export function parseVersion(raw: string, header: string = VERSION_HEADER): ApiVersion {
  const known = seen.get(raw);
  if (known) return known;
  const version = resolve(raw, header);
  if (seen.size >= SEEN_MAX) seen.clear();
  seen.set(raw, version);
  return version;
}

function resolve(raw: string, header: string): ApiVersion {
  // The reference service's clients send a bare channel name for the newest version of that channel, and the
  // JavaScript client sends the legacy form `V` + date on every request: it predates dated versions and asks
  // for the newest stable behaviour, whatever its date.
  if (raw === 'beta' || raw === 'alpha') return BY_RELEASE.get(LATEST_RELEASE)![raw];
  const legacy = LEGACY.exec(raw);
  if (legacy) {
    if (!isCalendarDate(Number(legacy[1]), Number(legacy[2]), Number(legacy[3]))) {
      throw badRequest(`Header ${header}: "${raw}" is not a calendar date; expected ${FORMAT}`);
    }
    return LATEST_STABLE;
  }
  if (raw === '') throw badRequest(`Header ${header} is empty; expected ${FORMAT}, or leave the header out for the latest stable version`);
  const m = SHAPE.exec(raw);
  if (!m) throw badRequest(`Header ${header}: "${clip(raw)}" is not a version; expected ${FORMAT}`);
  const [, y, mo, d, channel] = m;
  if (!isCalendarDate(Number(y), Number(mo), Number(d))) {
    throw badRequest(`Header ${header}: "${raw}" is not a calendar date; expected ${FORMAT}`);
  }
  const date = `${y}${mo}${d}`;
  if (date < FIRST_VERSION) throw badRequest(`Header ${header}: version ${date} is before ${FIRST_VERSION}, the first version of this API`);
  let release = RELEASES[0];
  for (const r of RELEASES) if (r <= date) release = r;
  return BY_RELEASE.get(release)![(channel as Channel | undefined) ?? 'stable'];
}

function isCalendarDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
  return d <= days;
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}...` : s;
}

/**
 * Resolves the request's version from its header (the latest stable one without a header), puts it on
 * `req.apiVersion` and on the response's header; throws a 400 for a malformed or conflicting header.
 */
export function applyVersion(req: FastifyRequest, reply: FastifyReply): void {
  const given = req.headers[VERSION_HEADER];
  const alias = req.headers[VERSION_HEADER_ALIAS];
  let version = LATEST_STABLE;
  if (given !== undefined) {
    if (alias !== undefined && alias !== given) {
      throw badRequest(`Headers ${VERSION_HEADER} ("${clip(String(given))}") and ${VERSION_HEADER_ALIAS} ("${clip(String(alias))}") disagree; send one of them`);
    }
    version = parseVersion(String(given), VERSION_HEADER);
  } else if (alias !== undefined) {
    version = parseVersion(String(alias), VERSION_HEADER_ALIAS);
  }
  req.apiVersion = version;
  reply.header(VERSION_HEADER, version.name);
}

/** Lets a scope's requests carry `req.apiVersion` (set by applyVersion). */
export function decorateVersion(scope: FastifyInstance): void {
  scope.decorateRequest('apiVersion', null);
}

/** The check that a beta or alpha operation is called on its channel (throws a 400 naming the header to send); none for stable ones. */
export function channelGate(def: ApiRoute): ((req: FastifyRequest) => void) | undefined {
  const channel = def.channel ?? 'stable';
  if (channel === 'stable') return undefined;
  const op = operationName(def);
  const also = channel === 'beta' ? ' (or -alpha)' : '';
  return function gate(req: FastifyRequest): void {
    const version = req.apiVersion ?? LATEST_STABLE;
    if (version.reaches(channel)) return;
    throw badRequest(
      `${op} is a${channel === 'alpha' ? 'n' : ''} ${channel} operation; call it with the header "${VERSION_HEADER}: ${version.release}-${channel}" ` +
        `(any version date followed by -${channel}${also})`,
    );
  };
}
