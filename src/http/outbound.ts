/**
 * The one way Strata calls other servers (identity providers' discovery documents, key sets and token
 * endpoints, and every feature that calls out). Each call has one deadline for all of it (connecting,
 * headers and the whole body), reads at most a set number of bytes, speaks http or https only, follows no
 * redirect, and connects only to addresses the address policy allows: the host name is resolved once,
 * each address checked, and the connection made to the checked address, so a DNS answer that changes in
 * between cannot slip through.
 *
 * Failures are worded for whoever configured the URL, without what would turn the client into a port
 * scanner: a refused connection, a reset and a timeout read the same, and the remote body is never shown.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { addressAllowed, type AddressAllowance } from './address-policy.js';

export interface OutboundConfig {
  /** Address kinds allowed besides public addresses. */
  allow: AddressAllowance[];
  /** The whole call, from resolving the host to the last byte of the body. */
  deadlineMs: number;
  /** Largest response body read; a longer one fails the call. */
  maxBytes: number;
}

/** Host name to its addresses (tests replace the system resolver). */
export type Resolver = (hostname: string) => Promise<string[]>;

export type OutboundFailure = 'url' | 'address' | 'unreachable' | 'redirect' | 'too-large' | 'status' | 'not-json';

export class OutboundError extends Error {
  constructor(
    readonly failure: OutboundFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface OutboundRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface OutboundResponse {
  status: number;
  /** The answer's headers, names lower-cased; a repeated header (set-cookie) as a list. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface OutboundClient {
  readonly config: OutboundConfig;
  /**
   * Any answer that is not a redirect, with its whole body; `what` names the document in messages
   * ("the identity provider's key set"). Throws OutboundError.
   */
  request(url: string, what: string, init?: OutboundRequest): Promise<OutboundResponse>;
  /** A GET answered 2xx with a JSON body. Throws OutboundError. */
  getJson(url: string, what: string): Promise<unknown>;
  close(): Promise<void>;
}

/** Thrown by the connector and recognised when the request fails with it. */
class AddressRefused extends Error {}

const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export function createOutboundClient(config: OutboundConfig, resolve: Resolver = systemResolver): OutboundClient {
  const connect = buildConnector({ timeout: config.deadlineMs });
  const agent = new Agent({
    connect(options, callback) {
      allowedAddress(options.hostname, config.allow, resolve).then(
        // `host` keeps the name, so TLS still checks the certificate against it.
        (address) => connect({ ...options, hostname: address }, callback),
        (err: Error) => callback(err, null),
      );
    },
  });

  async function send(url: string, what: string, init: OutboundRequest): Promise<OutboundResponse> {
    const target = httpUrl(url);
    if (!target) throw new OutboundError('url', `${what}: expected an http or https URL`);
    const fail = (failure: OutboundFailure, detail: string) => new OutboundError(failure, `${what} (${url}) ${detail}`);
    const signal = AbortSignal.timeout(config.deadlineMs);
    try {
      const res = await request(target, { dispatcher: agent, method: init.method ?? 'GET', headers: init.headers, body: init.body, signal });
      // A body given up on (destroyed) reports it as an error event; reading below sees errors through its iterator.
      res.body.on('error', () => {});
      if (res.statusCode >= 300 && res.statusCode < 400) {
        res.body.destroy();
        throw fail('redirect', `answered with a redirect (HTTP ${res.statusCode}), which is not followed`);
      }
      const tooLarge = () => fail('too-large', `answered with more than ${config.maxBytes} bytes, the limit`);
      if (Number(res.headers['content-length']) > config.maxBytes) {
        res.body.destroy();
        throw tooLarge();
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > config.maxBytes) {
          res.body.destroy();
          throw tooLarge();
        }
        chunks.push(chunk);
      }
      return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      if (causes(err).some((e) => e instanceof AddressRefused)) {
        throw fail('address', `was not called: the address of ${target.hostname} is not one this server may call (outbound address policy)`);
      }
      throw fail('unreachable', `could not be fetched: the server could not be reached, or did not answer completely within ${config.deadlineMs} ms`);
    }
  }

  return {
    config,
    request: (url, what, init = {}) => send(url, what, init),
    async getJson(url, what) {
      const res = await send(url, what, { headers: { accept: 'application/json' } });
      if (res.status < 200 || res.status >= 300) throw new OutboundError('status', `${what} (${url}) answered HTTP ${res.status}`);
      try {
        return JSON.parse(res.body.toString('utf8'));
      } catch {
        throw new OutboundError('not-json', `${what} (${url}) answered with something other than JSON`);
      }
    },
    close: () => agent.close(),
  };
}

/** The URL in `text` when it is an absolute http or https URL. */
export function httpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The first address of a host the policy allows; the connection is made to exactly this address. */
async function allowedAddress(hostname: string, allow: readonly AddressAllowance[], resolve: Resolver): Promise<string> {
  const addresses = isIP(hostname) ? [hostname] : await resolve(hostname);
  const allowed = addresses.find((a) => addressAllowed(a, allow));
  if (allowed === undefined) throw new AddressRefused(hostname);
  return allowed;
}

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && chain.length < 10; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}
