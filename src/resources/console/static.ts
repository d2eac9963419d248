/**
 * Serves the web console's built files (`npm run build` writes them to dist/console) at `/console`. Files
 * are read when asked for: a server whose console is never opened reads none of them.
 */
import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { notFound } from '../../http/errors.js';
import { sendError } from '../../http/pipeline.js';

/** dist/console from the package root, whether this module runs from src/ (tests) or dist/. */
const ROOT = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

async function send(reply: FastifyReply, relative: string): Promise<FastifyReply> {
  const file = resolve(ROOT, relative);
  if (!file.startsWith(ROOT)) return sendError(reply, notFound(`No console file ${relative}`));
  let body: Buffer;
  try {
    body = await readFile(file);
  } catch {
    if (relative === 'index.html') return sendError(reply, notFound('The console is not built here: `npm run build` builds it into dist/console'));
    return sendError(reply, notFound(`No console file ${relative}`));
  }
  // Built assets carry a hash of their content in their name; the page itself must be fetched anew.
  const cache = relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
  return reply
    .header('cache-control', cache)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .type(TYPES[extname(file)] ?? 'application/octet-stream')
    .send(body);
}

export function registerConsole(app: FastifyInstance): void {
  app.get('/console', { schema: { summary: 'The web console (sign-in, data browsers, time series plots, request log, API reference)' } }, (_req, reply) => send(reply, 'index.html'));
  // The console routes its pages in the URL's fragment: its one document and its built assets are all there is.
  app.get('/console/assets/:file', { schema: { summary: "The web console's scripts and styles" } }, (req, reply) => send(reply, `assets/${(req.params as { file: string }).file}`));
}
