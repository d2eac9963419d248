/**
 * Compressed request bodies. The official Python SDK gzips the body of every POST and PUT by default
 * (`Content-Encoding: gzip`), so a body is decoded before it is parsed: gzip, deflate and br, or several
 * of them in the order the header lists them. The route's body size limit applies to the decoded bytes, and
 * decoding stops as soon as they pass it: a small compressed body cannot expand past it, nor make the server
 * inflate the rest only to throw it away. An encoding Strata cannot decode is 415, undecodable content 400.
 */
import { Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, bodyTooLarge } from './errors.js';

/**
 * Output pieces of 64 KiB rather than zlib's 16: each piece is a trip to the thread pool and back, and a body of
 * many megabytes (a batch of data points) costs a quarter of the trips.
 */
const CHUNK = 64 * 1024;

const decoders: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip({ chunkSize: CHUNK }),
  'x-gzip': () => zlib.createGunzip({ chunkSize: CHUNK }),
  deflate: () => zlib.createInflate({ chunkSize: CHUNK }),
  br: () => zlib.createBrotliDecompress({ chunkSize: CHUNK }),
};

const MAX_CODINGS = 3;

/** What Fastify's body reader compares with Content-Length when a hook replaces the body stream. */
type DecodedBody = Transform & { receivedEncodedLength: number };

/** Whether a body follows the request's headers (RFC 9112 6.3: a length above zero, or a transfer coding). */
function hasBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** A preParsing hook: the request body, decoded as its Content-Encoding says. */
export function decodeRequestBody(req: FastifyRequest, _reply: FastifyReply, payload: Readable, done: (err: Error | null, body?: Readable) => void): void {
  const header = req.headers['content-encoding'];
  if (header === undefined || !hasBody(req)) return done(null, payload);
  // RFC 9110 8.4: codings in the order they were applied; "identity" means none.
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return done(null, payload);
  // Each coding is a decompressor with its own buffers: a header listing thousands must not cost thousands.
  if (codings.length > MAX_CODINGS) {
    return done(new ApiError(415, `Content-Encoding lists ${codings.length} codings; at most ${MAX_CODINGS} are supported`));
  }
  const unknown = codings.find((c) => !Object.hasOwn(decoders, c));
  if (unknown !== undefined) {
    return done(new ApiError(415, `Content-Encoding "${unknown}" is not supported; send the body uncompressed or encoded with gzip, deflate or br`));
  }
  const stages = codings.reverse().map((c) => decoders[c]());
  const limit = req.routeOptions.bodyLimit;
  let length = 0;
  // Each stage's error ends the decoded body with a 400 naming the encoding that failed (zlib's bare error
  // would be a 500); a stage without a listener would crash the process.
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    // Nothing more is decoded; what else the client sends is read and dropped until the answer closes the connection.
    payload.unpipe();
    for (const stage of stages) stage.destroy();
    decoded.destroy(err instanceof ApiError ? err : badRequest(`The request body is not valid ${header} content (Content-Encoding): ${err.message}`));
  };
  const decoded = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      length += chunk.length;
      if (length > limit) fail(bodyTooLarge(limit));
      else next(null, chunk);
    },
  }) as DecodedBody;
  decoded.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    decoded.receivedEncodedLength += chunk.length;
  });
  payload.on('error', fail);
  // Fastify reads the body only where a route parses one; unread, the error must not go unheard (that
  // would end the process). Where it is read, Fastify's own listener gets the error too.
  decoded.on('error', () => {});
  let from: Readable = payload;
  for (const stage of stages) {
    stage.on('error', fail);
    from = from.pipe(stage);
  }
  from.pipe(decoded);
  done(null, decoded);
}
