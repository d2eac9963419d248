/**
 * Sign-in: the OAuth 2.0 authorization code grant with PKCE (S256) against the built-in identity provider
 * (its dev client by default) or any OpenID Connect provider a project trusts. The token lives in this tab's
 * session storage only.
 */
export interface Provider {
  /** The issuer, whose discovery document names the authorization and token endpoints. */
  issuer: string;
  clientId: string;
  scope: string;
}

export interface Session {
  token: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

const PROVIDER_KEY = 'strata-console.provider';
const SESSION_KEY = 'strata-console.session';
const PENDING_KEY = 'strata-console.pending';

export function redirectUri(): string {
  return `${location.origin}/console/`;
}

export function savedProvider(): Provider {
  const saved = localStorage.getItem(PROVIDER_KEY);
  if (saved) return JSON.parse(saved) as Provider;
  return { issuer: location.origin, clientId: 'strata-admin', scope: 'openid' };
}

export function currentSession(): Session | undefined {
  const raw = sessionStorage.getItem(SESSION_KEY);
  if (!raw) return undefined;
  const session = JSON.parse(raw) as Session;
  return session.expiresAt > Date.now() ? session : undefined;
}

export function signOut(): void {
  sessionStorage.removeItem(SESSION_KEY);
}

/** The event the shell listens for to show the sign-in page again; its detail says why. */
export const SIGNED_OUT = 'strata-console:signed-out';

/** Ends the session that expired or that the API no longer accepts, and sends the user back to sign in. */
export function sessionEnded(reason: string): void {
  signOut();
  window.dispatchEvent(new CustomEvent<string>(SIGNED_OUT, { detail: reason }));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

async function discover(issuer: string): Promise<{ authorization_endpoint: string; token_endpoint: string }> {
  const res = await fetch(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, { credentials: 'omit' });
  if (!res.ok) throw new Error(`The provider's discovery document answered ${res.status}`);
  const doc = (await res.json()) as { authorization_endpoint?: string; token_endpoint?: string };
  if (!doc.authorization_endpoint || !doc.token_endpoint) throw new Error('The provider does not offer the authorization code grant (no authorization_endpoint)');
  return { authorization_endpoint: doc.authorization_endpoint, token_endpoint: doc.token_endpoint };
}

/** Goes to the provider's sign-in page; it comes back to the console with a code. */
export async function signIn(provider: Provider, returnTo: string): Promise<void> {
  if (!crypto.subtle) throw new Error('Signing in needs a secure context: open the console at http://localhost or over https');
  localStorage.setItem(PROVIDER_KEY, JSON.stringify(provider));
  const endpoints = await discover(provider.issuer);
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(48)));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, tokenEndpoint: endpoints.token_endpoint, clientId: provider.clientId, returnTo }));
  const url = new URL(endpoints.authorization_endpoint);
  const params = { response_type: 'code', client_id: provider.clientId, redirect_uri: redirectUri(), code_challenge: challenge, code_challenge_method: 'S256', state, scope: provider.scope };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  location.assign(url.toString());
}

/** After the provider's redirect: the code for a token. Returns where the user was going, if this was a redirect. */
export async function completeSignIn(): Promise<string | undefined> {
  const query = new URLSearchParams(location.search);
  const code = query.get('code');
  const error = query.get('error');
  if (!code && !error) return undefined;
  history.replaceState(null, '', `${location.pathname}${location.hash}`);
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as { verifier: string; state: string; tokenEndpoint: string; clientId: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING_KEY);
  if (error) throw new Error(`The provider refused the sign-in: ${query.get('error_description') ?? error}`);
  if (!pending || pending.state !== query.get('state')) throw new Error('This sign-in was not started here (state differs); sign in again');
  const res = await fetch(pending.tokenEndpoint, {
    method: 'POST',
    credentials: 'omit',
    body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, code_verifier: pending.verifier, redirect_uri: redirectUri(), client_id: pending.clientId }),
  });
  const body = (await res.json()) as { access_token?: string; expires_in?: number; error_description?: string };
  if (!res.ok || !body.access_token) throw new Error(`The token endpoint refused the code: ${body.error_description ?? res.status}`);
  const session: Session = { token: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000 };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return pending.returnTo;
}
