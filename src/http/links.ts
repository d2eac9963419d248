/**
 * Signed links: addresses that carry their own authority instead of a bearer token, as the reference's upload
 * and download URLs do, so that a client can hand one to a program that holds no token (a browser, `curl`).
 * A link is `<public URL>/links/<kind>?token=<token>`; the token is the link's claims (what it is for: a
 * file, an upload, a part) and its expiry, with an HMAC-SHA256 over them and the kind under a key derived
 * from the server's secret. Anyone holding the link may use it until it expires; nothing else can make one.
 * A changed token, or one of another server or another kind, is refused with 403; an expired one with 410.
 * What a link may do beyond that (once only, while its file still holds the content it names) is the rule
 * of the area that serves it.
 *
 * An area declares the links it serves (`Area.links`); the composition root serves them outside the project
 * API, with the body, when there is one, given to the handler unread.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError, forbidden } from './errors.js';
import { clientGone, sendResult } from './pipeline.js';
import type { Services } from './services.js';

/** What a link names, as the area that made it chose (ids, a part number, a blob's key). */
export type LinkClaims = Readonly<Record<string, string | number>>;

export interface LinkContext {
  claims: LinkClaims;
  /** The app's services, with no request scope: the link is the authority. */
  services: Services;
  /** The request body, unread (PUT); undefined when there is none. */
  body: Readable | undefined;
  headers: IncomingHttpHeaders;
  /** `HEAD` when the client asks for the headers only: the handler need not make a body. */
  method: string;
  /** Aborts when the client goes away before the answer is sent. */
  signal: AbortSignal;
}

/** An answer: a status (200 unless given), headers, and a body (a stream is sent as it is, anything else as JSON). */
export interface LinkAnswer {
  status?: number;
  headers?: Readonly<Record<string, string | number>>;
  body?: unknown;
}

export interface LinkRoute {
  method: 'GET' | 'PUT';
  /** What the link is for, the path segment after `/links/` (`file-upload`): a token is good for its own kind only. */
  kind: string;
  /** One line for GET /openapi.json. */
  summary: string;
  /** The largest body it takes, in bytes (the body is given unread; the handler stops reading past this). */
  bodyLimit?: number;
  handler(ctx: LinkContext): Promise<LinkAnswer>;
}

export interface LinkSigner {
  /** The absolute URL of a link of `kind` carrying `claims`, valid until `expires` (epoch ms). */
  url(kind: string, claims: LinkClaims, expires: number): string;
  /** The claims of a link's token, when it is one of this server, of `kind`, unchanged and unexpired at `now`. */
  verify(kind: string, token: string, now: number): LinkClaims;
}

/** The path a link of `kind` is served at. */
export const linkPath = (kind: string) => `/links/${kind}`;

const MAC = 32;
const MAX_TOKEN = 4096;

export function createLinkSigner(secret: Buffer, publicUrl: string): LinkSigner {
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'strata signed link', 32));
  const mac = (kind: string, payload: string) => createHmac('sha256', key).update(kind).update('\0').update(payload).digest();
  const refused = () => forbidden('The link is not valid: it was changed, or it was not issued by this server for this use; ask for a new one');
  return {
    url(kind, claims, expires) {
      const payload = Buffer.from(JSON.stringify({ e: expires, c: claims })).toString('base64url');
      return `${publicUrl}${linkPath(kind)}?token=${payload}.${mac(kind, payload).toString('base64url')}`;
    },
    verify(kind, token, now) {
      const dot = token.indexOf('.');
      if (token.length > MAX_TOKEN || dot < 1) throw refused();
      const payload = token.slice(0, dot);
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      if (given.length !== MAC || !timingSafeEqual(given, mac(kind, payload))) throw refused();
      const { e: expires, c: claims } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { e: number; c: LinkClaims };
      if (now > expires) throw new ApiError(410, `The link expired at ${new Date(expires).toISOString()}; ask for a new one`);
      return claims;
    },
  };
}

/**
 * Serves the areas' links at `/links/<kind>`, outside the project API: no token, no project's throttle; the
 * body of a PUT, whatever its type, is handed to the handler as a stream (after the Content-Encoding is
 * decoded, as for every request).
 */
export async function registerLinkRoutes(app: FastifyInstance, routes: readonly LinkRoute[], services: Services): Promise<void> {
  const signer = services.links;
  if (routes.length === 0 || !signer) return;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    for (const def of routes) {
      scope.route({
        method: def.method,
        url: linkPath(def.kind),
        ...(def.bodyLimit ? { bodyLimit: def.bodyLimit } : {}),
        schema: { summary: def.summary, querystring: LinkQuery },
        handler: async (req, reply) => {
          const claims = signer.verify(def.kind, (req.query as { token: string }).token, services.now());
          const answer = await def.handler({ claims, services, body: req.body as Readable | undefined, headers: req.headers, method: req.method, signal: clientGone(req, reply) });
          reply.code(answer.status ?? 200);
          for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
          // An empty stream: Fastify's HEAD keeps the headers given for a stream (for a payload it counts its bytes).
          if (req.method === 'HEAD') return reply.send(Readable.from([]));
          return answer.body instanceof Readable ? reply.send(answer.body) : sendResult(reply, answer.body ?? {});
        },
      });
    }
  });
}

const LinkQuery = Type.Object({ token: Type.String({ minLength: 1, maxLength: MAX_TOKEN }) }, { additionalProperties: false });
