/**
 * A project's OpenID Connect configuration: which issuer's tokens it accepts, for which audience, and which
 * claims carry group ids. Stored in `projects.config.oidc`; a project without one accepts the built-in
 * provider. A new configuration is checked against the provider's discovery document: `jwksUrl` and
 * `tokenUrl` may be left out (they are taken from it), but when given they must equal it. The document's
 * endpoints must be on the issuer's origin (or one the operator allows), so a document cannot send Strata's
 * later calls anywhere else.
 */
import { badRequest } from '../http/errors.js';
import { httpUrl, OutboundError, type OutboundClient } from '../http/outbound.js';
import { GROUPS_CLAIM, type IdentityProvider } from './idp.js';

export interface ClaimName {
  claimName: string;
}

export interface OidcConfiguration {
  jwksUrl: string;
  tokenUrl?: string;
  issuer: string;
  audience: string;
  skewMs?: number;
  accessClaims: ClaimName[];
  scopeClaims: ClaimName[];
  logClaims: ClaimName[];
  isGroupCallbackEnabled?: boolean;
  identityProviderScope?: string;
}

/** A configuration as a request states it: discovery fills in what is left out. */
export type OidcConfigurationInput = Omit<OidcConfiguration, 'jwksUrl'> & { jwksUrl?: string };

export interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
  token_endpoint?: string;
  grant_types_supported?: string[];
}

/** How Strata reaches identity providers. */
export interface ProviderAccess {
  outbound: OutboundClient;
  /** Origins besides the issuer's own where its discovery document may place its endpoints; `*` for any. */
  extraOrigins: readonly string[] | '*';
}

export function builtInConfiguration(idp: IdentityProvider): OidcConfiguration {
  const d = idp.discovery() as unknown as DiscoveryDocument;
  return {
    jwksUrl: d.jwks_uri,
    tokenUrl: d.token_endpoint,
    issuer: idp.issuer,
    audience: idp.audience,
    accessClaims: [{ claimName: GROUPS_CLAIM }],
    scopeClaims: [],
    logClaims: [],
  };
}

/** Issuers of Microsoft Entra ID (Azure AD): the one provider kind that keeps a rule on `isGroupCallbackEnabled`. */
const AZURE_AD_ISSUER = /^https:\/\/(login\.microsoftonline\.(com|us|de)|login\.chinacloudapi\.cn|sts\.windows\.net|sts\.chinacloudapi\.cn)\//i;

export function isAzureAdIssuer(issuer: string): boolean {
  return AZURE_AD_ISSUER.test(issuer);
}

export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

async function fetchDiscovery(issuer: string, where: string, access: ProviderAccess): Promise<DiscoveryDocument> {
  const url = discoveryUrl(issuer);
  let doc: unknown;
  try {
    doc = await access.outbound.getJson(url, "the issuer's discovery document");
  } catch (err) {
    if (err instanceof OutboundError) throw badRequest(`${where}.issuer: ${err.message}`);
    throw err;
  }
  const d = doc as Partial<Record<keyof DiscoveryDocument, unknown>> | null;
  if (typeof d !== 'object' || d === null || typeof d.issuer !== 'string' || typeof d.jwks_uri !== 'string') {
    throw badRequest(`${where}.issuer: the discovery document at ${url} lacks "issuer" or "jwks_uri"`);
  }
  // The remote document's text is not repeated in messages: the URL may point at a server that is not an identity provider.
  if (d.issuer !== issuer) {
    throw badRequest(`${where}.issuer: the discovery document at ${url} names another issuer; use exactly the "issuer" value it states (mind a trailing slash, and http versus https)`);
  }
  const issuerOrigin = new URL(issuer).origin;
  const checkEndpoint = (name: string, value: unknown) => {
    const problem = endpointProblem(value, issuerOrigin, access.extraOrigins);
    if (problem) throw badRequest(`${where}.issuer: the discovery document at ${url} has a "${name}" that ${problem}`);
  };
  checkEndpoint('jwks_uri', d.jwks_uri);
  if (d.token_endpoint !== undefined) checkEndpoint('token_endpoint', d.token_endpoint);
  return d as DiscoveryDocument;
}

function endpointProblem(value: unknown, issuerOrigin: string, extraOrigins: readonly string[] | '*'): string | undefined {
  const url = typeof value === 'string' ? httpUrl(value) : undefined;
  if (!url) return 'is not an http or https URL';
  if (url.origin === issuerOrigin || extraOrigins === '*' || extraOrigins.includes(url.origin)) return undefined;
  return `is not on the issuer's origin ${issuerOrigin} (an operator can allow further origins with STRATA_OIDC_EXTRA_ORIGINS)`;
}

function checkUrl(value: string, field: string): void {
  if (!httpUrl(value)) throw badRequest(`${field}: expected an absolute http or https URL, got ${JSON.stringify(value)}`);
}

/**
 * Checks a configuration and completes it from the provider's discovery document (the built-in provider's
 * own document when the issuer is Strata's): the stored form always holds the discovered key and token URLs.
 */
export async function resolveConfiguration(input: OidcConfigurationInput, idp: IdentityProvider, access: ProviderAccess, where: string): Promise<OidcConfiguration> {
  checkUrl(input.issuer, `${where}.issuer`);
  if (input.audience.trim() === '') throw badRequest(`${where}.audience: must not be empty`);
  if (input.skewMs !== undefined && input.skewMs !== 0) {
    throw badRequest(`${where}.skewMs: is deprecated and must be 0 when sent (got ${input.skewMs}); leave it out`);
  }
  if (input.isGroupCallbackEnabled === false && isAzureAdIssuer(input.issuer)) {
    throw badRequest(`${where}.isGroupCallbackEnabled: is deprecated; for a Microsoft Entra ID (Azure AD) issuer it must be true when sent; leave it out`);
  }
  for (const list of ['accessClaims', 'scopeClaims', 'logClaims'] as const) {
    input[list].forEach((c, i) => {
      if (c.claimName.trim() === '') throw badRequest(`${where}.${list}[${i}].claimName: must not be empty`);
    });
  }
  const discovery = input.issuer === idp.issuer ? (idp.discovery() as unknown as DiscoveryDocument) : await fetchDiscovery(input.issuer, where, access);
  if (input.jwksUrl !== undefined && input.jwksUrl !== discovery.jwks_uri) {
    throw badRequest(`${where}.jwksUrl: "${input.jwksUrl}" does not match the jwks_uri "${discovery.jwks_uri}" of the issuer's discovery document; leave it out or send that value`);
  }
  if (input.tokenUrl !== undefined && input.tokenUrl !== discovery.token_endpoint) {
    throw badRequest(
      `${where}.tokenUrl: "${input.tokenUrl}" does not match the token_endpoint ${JSON.stringify(discovery.token_endpoint ?? null)} of the issuer's discovery document; leave it out or send that value`,
    );
  }
  const out: OidcConfiguration = {
    jwksUrl: discovery.jwks_uri,
    ...(discovery.token_endpoint !== undefined ? { tokenUrl: discovery.token_endpoint } : {}),
    issuer: input.issuer,
    audience: input.audience,
    ...(input.skewMs !== undefined ? { skewMs: 0 } : {}),
    accessClaims: input.accessClaims,
    scopeClaims: input.scopeClaims,
    logClaims: input.logClaims,
    ...(input.isGroupCallbackEnabled !== undefined ? { isGroupCallbackEnabled: input.isGroupCallbackEnabled } : {}),
    ...(input.identityProviderScope !== undefined ? { identityProviderScope: input.identityProviderScope } : {}),
  };
  return out;
}

type Setter<T> = { set: T } | { setNull: boolean };
type ClaimsPatch = { set: ClaimName[] } | { add: ClaimName[] } | { remove: ClaimName[] };

export interface OidcModify {
  jwksUrl?: { set: string };
  tokenUrl?: Setter<string>;
  issuer?: { set: string };
  audience?: { set: string };
  skewMs?: Setter<number>;
  accessClaims?: ClaimsPatch;
  scopeClaims?: ClaimsPatch;
  logClaims?: ClaimsPatch;
  isGroupCallbackEnabled?: Setter<boolean>;
  identityProviderScope?: Setter<string>;
}

function patchClaims(current: ClaimName[], patch: ClaimsPatch | undefined): ClaimName[] {
  if (!patch) return current;
  if ('set' in patch) return patch.set;
  if ('add' in patch) return [...current, ...patch.add.filter((c) => !current.some((x) => x.claimName === c.claimName))];
  return current.filter((c) => !patch.remove.some((x) => x.claimName === c.claimName));
}

function patchOptional<T>(current: T | undefined, patch: Setter<T> | undefined): T | undefined {
  if (!patch) return current;
  return 'set' in patch ? patch.set : undefined;
}

/**
 * A `modify` applied to the current configuration. Key and token URLs are kept only when this request
 * states them: otherwise they are taken from the (possibly new) issuer's discovery document again.
 */
export function applyModify(current: OidcConfiguration, m: OidcModify): OidcConfigurationInput {
  return {
    jwksUrl: m.jwksUrl?.set,
    tokenUrl: m.tokenUrl && 'set' in m.tokenUrl ? m.tokenUrl.set : undefined,
    issuer: m.issuer?.set ?? current.issuer,
    audience: m.audience?.set ?? current.audience,
    skewMs: m.skewMs && 'set' in m.skewMs ? m.skewMs.set : undefined,
    accessClaims: patchClaims(current.accessClaims, m.accessClaims),
    scopeClaims: patchClaims(current.scopeClaims, m.scopeClaims),
    logClaims: patchClaims(current.logClaims, m.logClaims),
    isGroupCallbackEnabled: patchOptional(current.isGroupCallbackEnabled, m.isGroupCallbackEnabled),
    identityProviderScope: patchOptional(current.identityProviderScope, m.identityProviderScope),
  };
}
