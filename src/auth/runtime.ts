/**
 * Authentication at run time: which provider a project accepts, the principal a token stands for in a
 * project, and the caches that keep this off the hot path. A request whose token was seen before in the
 * same project costs two map lookups; the project's authentication version (bumped with every change to its
 * configuration, groups or sessions, in any process) invalidates what was cached about it.
 */
import { createLocalJWKSet, errors, type JWTPayload } from 'jose';
import { ApiError, badRequest, notFound, unauthorized } from '../http/errors.js';
import { OutboundError, type OutboundResponse } from '../http/outbound.js';
import type { Services } from '../http/services.js';
import type { Queryable } from '../storage/store.js';
import { allProjectsAuth, readProjectConfig, type ProjectAuthRow } from '../storage/projects.js';
import type { AclRegistry } from './acls.js';
import { projectGroups } from './group-store.js';
import { DEV_CLIENT_ID, type IdentityProvider } from './idp.js';
import { createRemoteKeySet, KeySetUnavailable, UnknownSigningKey, type KeyLookup, type RemoteKeySet } from './jwks.js';
import { appIdOf, memberGroups, resolveGroups, type ResolvedGroup } from './membership.js';
import { builtInConfiguration, resolveConfiguration, type OidcConfiguration, type OidcConfigurationInput, type ProviderAccess } from './oidc-config.js';
import type { Claims, Grant, Principal } from './principal.js';
import { effectiveStatus, sessionById } from './session-store.js';
import { LOGIN_SESSION_CLAIM, loginSessionRevoked } from './login-sessions.js';
import { createProfileRecorder } from './user-profiles.js';
import { bearerToken, TOKEN_NOT_ACCEPTED, unverifiedClaims, verifyToken, type VerificationTarget } from './verify.js';

export interface AuthRuntimeOptions {
  db: Queryable;
  idp: IdentityProvider;
  acls: AclRegistry;
  now: () => number;
  jwksRefreshIntervalMs: number;
  /** How identity providers are called: the shared outbound client and the origins their endpoints may be on. */
  providers: ProviderAccess;
}

/** The identity provider a project accepts tokens from. */
export interface ProjectProvider {
  config: OidcConfiguration;
  /** Strata's own provider: verified with its in-memory keys; its administrator client is all-powerful. */
  builtIn: boolean;
  target: VerificationTarget;
  accessClaims: string[];
  /** Whether the project collects user profiles (its `userProfilesConfiguration`). */
  collectsProfiles: boolean;
}

export interface TokenInspection {
  subject: string;
  projects: Array<{ projectUrlName: string; groups: number[] }>;
  capabilities: Array<Record<string, unknown>>;
}

export interface AuthRuntime {
  readonly idp: IdentityProvider;
  readonly acls: AclRegistry;
  now(): number;
  /**
   * The principal of an `Authorization` header in a project when it is cached and still valid: the hot path,
   * synchronous, keyed by the header itself so a known token is not even parsed again.
   */
  cachedPrincipal(authorization: string, project: ProjectAuthRow): Principal | undefined;
  /** The principal of an `Authorization` header in a project; 401 when the project does not accept it. */
  authenticate(authorization: string | undefined, project: ProjectAuthRow): Promise<Principal>;
  /** The same for a bare token, bypassing the cache (a session's source token). */
  principalForToken(token: string, project: ProjectAuthRow): Promise<Principal>;
  /**
   * The answer to a request for a project that does not exist: 404 to a caller whose token this server's own
   * provider issued, and to any other the refusal a project would give a token it does not accept (verify.ts),
   * so that a caller without a token learns nothing of which projects exist.
   */
  unknownProject(authorization: string | undefined, name: string): Promise<ApiError>;
  /** The principal that delegated claims stand for in a project now (sessions). */
  principalForClaims(project: ProjectAuthRow, claims: Claims, expiresAt: number, sessionId?: number): Promise<Principal>;
  provider(project: ProjectAuthRow): Promise<ProjectProvider>;
  /** Checks a new configuration against the provider's discovery document and keys; 400 naming what is wrong. */
  resolveConfiguration(input: OidcConfigurationInput, where: string): Promise<OidcConfiguration>;
  /** Obtains an access token for client credentials from the project's provider; 400 when it refuses. */
  clientCredentialsToken(project: ProjectAuthRow, clientId: string, clientSecret: string): Promise<string>;
  /** The audience of the access tokens of a project's sessions (they are valid in that project only). */
  sessionAudience(project: string): string;
  inspect(authorization: string | undefined): Promise<TokenInspection>;
  /**
   * The verified claims of a token the built-in provider issued (the identity service's operations, which
   * belong to no project); 401 for any other token, and for one whose login session was revoked.
   */
  builtInClaims(authorization: string | undefined): Promise<JWTPayload>;
  /** The cached key set of a JWKS address (tests read its fetch count). */
  keySet(url: string): RemoteKeySet;
}

/** The error codes of a token endpoint's refusal (RFC 6749 section 5.2). */
const OAUTH_ERRORS = ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope'];

/** Bounds each cache; an attacker sending endless distinct tokens only evicts the oldest entries. */
const MAX_CACHED_TOKENS = 10_000;
const ADMIN_GRANTS: Grant[] = [{ acl: '*', actions: ['*'], scope: { all: {} }, projects: '*' }];

interface CachedPrincipal {
  version: number;
  principal: Principal;
  /** Seconds since the epoch. */
  until: number;
}

/** A map that forgets its oldest entries beyond a size, so hostile tokens cannot grow memory without bound. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

function jsonObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function createAuthRuntime(opts: AuthRuntimeOptions): AuthRuntime {
  const { db, idp, acls, now } = opts;
  const principals = new Map<string, Map<number, CachedPrincipal>>();
  const verified = new Map<string, JWTPayload>();
  const providers = new Map<number, { version: number; provider: ProjectProvider }>();
  const groups = new Map<number, { version: number; groups: ResolvedGroup[] }>();
  const keySets = new Map<string, RemoteKeySet>();
  const recordProfile = createProfileRecorder(db, now);

  const localKeys = createLocalJWKSet(idp.jwks);
  const builtInKeys: KeyLookup = async (header, token) => {
    try {
      return await localKeys(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) throw new UnknownSigningKey(header.kid, false);
      throw err;
    }
  };
  const builtInKeysUrl = String((idp.discovery() as { jwks_uri: string }).jwks_uri);
  const builtInTarget: VerificationTarget = { issuer: idp.issuer, audience: idp.audience, keys: builtInKeys, keysUrl: builtInKeysUrl };

  function keySet(url: string): RemoteKeySet {
    let set = keySets.get(url);
    if (!set) keySets.set(url, (set = createRemoteKeySet(url, opts.providers.outbound, opts.jwksRefreshIntervalMs, now)));
    return set;
  }

  async function provider(project: ProjectAuthRow): Promise<ProjectProvider> {
    const cached = providers.get(project.id);
    if (cached && cached.version === project.authVersion) return cached.provider;
    const projectConfig = await readProjectConfig(db, project.id);
    const stored = projectConfig.oidc as OidcConfiguration | undefined;
    const config = stored ?? builtInConfiguration(idp);
    const builtIn = config.issuer === idp.issuer;
    const p: ProjectProvider = {
      config,
      builtIn,
      target: {
        issuer: config.issuer,
        audience: config.audience,
        keys: builtIn ? builtInKeys : keySet(config.jwksUrl).lookup,
        keysUrl: builtIn ? builtInKeysUrl : config.jwksUrl,
      },
      accessClaims: config.accessClaims.map((c) => c.claimName),
      collectsProfiles: (projectConfig.userProfiles as { enabled?: boolean } | undefined)?.enabled === true,
    };
    providers.set(project.id, { version: project.authVersion, provider: p });
    return p;
  }

  async function groupsOf(project: ProjectAuthRow): Promise<ResolvedGroup[]> {
    const cached = groups.get(project.id);
    if (cached && cached.version === project.authVersion) return cached.groups;
    const resolved = resolveGroups(await projectGroups(db, project.id), acls, project.name);
    groups.set(project.id, { version: project.authVersion, groups: resolved });
    return resolved;
  }

  /** Refuses the claims of a built-in token whose login session was revoked (sessions delegate those claims too). */
  async function requireLiveLoginSession(claims: Claims): Promise<void> {
    if (claims.iss !== idp.issuer || claims[LOGIN_SESSION_CLAIM] === undefined) return;
    if (await loginSessionRevoked(db, claims[LOGIN_SESSION_CLAIM])) {
      throw unauthorized(`The login session ${String(claims[LOGIN_SESSION_CLAIM])} of this access token was revoked; get a new token`);
    }
  }

  async function principalForClaims(project: ProjectAuthRow, claims: Claims, expiresAt: number, sessionId?: number): Promise<Principal> {
    await requireLiveLoginSession(claims);
    const p = await provider(project);
    const subject = String(claims.sub);
    const clientId = appIdOf(claims);
    const base = { subject, ...(clientId !== undefined ? { clientId } : {}), expiresAt, claims, ...(sessionId !== undefined ? { sessionId } : {}) };
    if (p.builtIn && claims.iss === idp.issuer && subject === DEV_CLIENT_ID) return { ...base, projects: '*', grants: ADMIN_GRANTS, groupIds: [] };
    const member = memberGroups(await groupsOf(project), claims, p.accessClaims);
    return { ...base, projects: [project.name], grants: member.flatMap((g) => g.grants), groupIds: member.map((g) => g.id) };
  }

  async function verifiedClaims(token: string, target: VerificationTarget): Promise<JWTPayload> {
    const key = `${target.issuer}\n${target.audience}\n${target.keysUrl}\n${token}`;
    const hit = verified.get(key);
    if (hit && (hit.exp ?? 0) > now() / 1000) return hit;
    const claims = await verifyToken(token, target, now());
    remember(verified, key, claims, MAX_CACHED_TOKENS);
    return claims;
  }

  function sessionAudience(project: string): string {
    return `${idp.issuer}/api/v1/projects/${project}/sessions`;
  }

  async function sessionPrincipal(token: string, project: ProjectAuthRow): Promise<Principal> {
    const claims = await verifiedClaims(token, { issuer: idp.issuer, audience: sessionAudience(project.name), keys: builtInKeys, keysUrl: builtInKeysUrl });
    const id = Number(claims.sid);
    const session = Number.isSafeInteger(id) ? await sessionById(db, id) : undefined;
    if (!session || session.projectId !== project.id) throw unauthorized(`The session of this access token does not exist in project "${project.name}"`);
    const status = effectiveStatus(session, now());
    if (status !== 'ACTIVE') throw unauthorized(`The session ${session.id} of this access token is ${status.toLowerCase()}; create a new session`);
    if (session.claims.iss !== (await provider(project)).config.issuer) {
      throw unauthorized(`The session ${session.id} delegates a token of "${String(session.claims.iss)}", which project "${project.name}" no longer accepts`);
    }
    return principalForClaims(project, session.claims, Math.min(claims.exp!, Math.floor(session.expirationTime / 1000)), session.id);
  }

  async function principalForToken(token: string, project: ProjectAuthRow): Promise<Principal> {
    const unverified = unverifiedClaims(token, now());
    if (unverified.iss === idp.issuer && unverified.sid !== undefined) return sessionPrincipal(token, project);
    const p = await provider(project);
    if (unverified.iss !== p.config.issuer) throw unauthorized(TOKEN_NOT_ACCEPTED);
    const claims = await verifiedClaims(token, p.target);
    return principalForClaims(project, claims, claims.exp!);
  }

  async function unknownProject(authorization: string | undefined, name: string): Promise<ApiError> {
    const token = bearerToken(authorization);
    unverifiedClaims(token, now());
    try {
      await verifiedClaims(token, builtInTarget);
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
    return notFound(`Project "${name}" does not exist on this server`);
  }

  function cachedPrincipal(authorization: string, project: ProjectAuthRow): Principal | undefined {
    const hit = principals.get(authorization)?.get(project.id);
    return hit !== undefined && hit.version === project.authVersion && hit.until > now() / 1000 ? hit.principal : undefined;
  }

  async function authenticate(authorization: string | undefined, project: ProjectAuthRow): Promise<Principal> {
    const token = bearerToken(authorization);
    const principal = await principalForToken(token, project);
    if ((await provider(project)).collectsProfiles) await recordProfile(project.id, principal.claims);
    const entry: CachedPrincipal = { version: project.authVersion, principal, until: principal.expiresAt ?? 0 };
    const byProject = principals.get(authorization!);
    if (byProject) byProject.set(project.id, entry);
    else remember(principals, authorization!, new Map([[project.id, entry]]), MAX_CACHED_TOKENS);
    return principal;
  }

  async function checkedConfiguration(input: OidcConfigurationInput, where: string): Promise<OidcConfiguration> {
    const config = await resolveConfiguration(input, idp, opts.providers, where);
    if (config.issuer !== idp.issuer) {
      try {
        await keySet(config.jwksUrl).load();
      } catch (err) {
        throw badRequest(`${where}.jwksUrl: ${err instanceof KeySetUnavailable ? err.message : String(err)}`);
      }
    }
    return config;
  }

  async function clientCredentialsToken(project: ProjectAuthRow, clientId: string, clientSecret: string): Promise<string> {
    const p = await provider(project);
    if (p.builtIn) {
      const client = idp.authenticate(clientId, clientSecret);
      if (!client) throw badRequest(`The identity provider refused the client credentials of "${clientId}": unknown client or wrong secret`);
      return (await idp.issueToken(client)).access_token;
    }
    const tokenUrl = p.config.tokenUrl;
    if (tokenUrl === undefined) throw badRequest(`The identity provider of project "${project.name}" has no token endpoint; sessions need client credentials it can check`);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    if (p.config.identityProviderScope !== undefined) form.set('scope', p.config.identityProviderScope);
    let res: OutboundResponse;
    try {
      res = await opts.providers.outbound.request(tokenUrl, "the identity provider's token endpoint", {
        method: 'POST',
        body: form.toString(),
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      });
    } catch (err) {
      if (err instanceof OutboundError) throw new ApiError(503, `Cannot check the client credentials of "${clientId}": ${err.message}`);
      throw err;
    }
    const answer = jsonObject(res.body);
    if (res.status >= 200 && res.status < 300 && typeof answer?.access_token === 'string') return answer.access_token;
    // RFC 6749 section 5.2: a refusal is 400 or 401 with one of a fixed set of error codes; only such a code
    // is repeated, never other text of the answer.
    if (res.status === 400 || res.status === 401) {
      const code = OAUTH_ERRORS.find((c) => c === answer?.error);
      throw badRequest(`The identity provider refused the client credentials of "${clientId}" (HTTP ${res.status}${code ? `, ${code}` : ''})`);
    }
    throw new ApiError(503, `Cannot check the client credentials of "${clientId}": the identity provider's token endpoint (${tokenUrl}) answered HTTP ${res.status} without an access token`);
  }

  async function inspect(authorization: string | undefined): Promise<TokenInspection> {
    bearerToken(authorization);
    const accepted: Principal[] = [];
    const projects: TokenInspection['projects'] = [];
    let refusal: ApiError | undefined;
    for (const project of await allProjectsAuth(db)) {
      let principal: Principal;
      try {
        principal = cachedPrincipal(authorization!, project) ?? (await authenticate(authorization, project));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        refusal ??= err;
        continue;
      }
      accepted.push(principal);
      if (principal.grants.length === 0) continue;
      projects.push({ projectUrlName: project.name, groups: principal.groupIds ?? [] });
    }
    if (accepted.length === 0) throw refusal ?? unauthorized('No project on this server accepts this access token');
    const names = projects.map((p) => p.projectUrlName);
    const capabilities: TokenInspection['capabilities'] = [];
    for (const principal of accepted) {
      for (const g of principal.grants) {
        if (g.acl === '*') {
          for (const def of acls.all()) capabilities.push({ [def.name]: { actions: [...def.actions], scope: { all: {} } }, projectScope: { allProjects: {} } });
        } else {
          capabilities.push({ [g.acl]: { actions: g.actions, scope: g.scope }, projectScope: { projects: g.projects === '*' ? names : g.projects } });
        }
      }
      if (principal.projects === '*') break;
    }
    return { subject: accepted[0].subject, projects, capabilities };
  }

  async function builtInClaims(authorization: string | undefined): Promise<JWTPayload> {
    const token = bearerToken(authorization);
    unverifiedClaims(token, now());
    const claims = await verifiedClaims(token, builtInTarget);
    await requireLiveLoginSession(claims);
    return claims;
  }

  return {
    idp,
    acls,
    builtInClaims,
    now,
    cachedPrincipal,
    authenticate,
    principalForToken,
    unknownProject,
    principalForClaims,
    provider,
    resolveConfiguration: checkedConfiguration,
    clientCredentialsToken,
    sessionAudience,
    inspect,
    keySet,
  };
}

/** The authentication runtime of a built app's services (route handlers of groups, sessions, projects). */
export function authRuntime(services: Services): AuthRuntime {
  if (!services.auth) throw new Error('These services were built without an authentication runtime');
  return services.auth;
}
