/**
 * Connections: how long a client may take to send a request, and how many connections one client address may
 * hold open. Without them a client that sends its headers or body a byte at a time holds a connection (a file
 * descriptor, a parser) for as long as it likes, and enough of them leave none for anyone else.
 */
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.js';
import { clientAddress } from './client-address.js';
import { ApiError, rawErrorResponse } from './errors.js';

/** How long a refused connection may stay open to take its answer before it is closed regardless. */
const REFUSED_LINGER_MS = 1000;

/**
 * Node's server timeouts for Fastify's options. Node checks them every `connectionsCheckingInterval`, so the
 * interval is a fraction of the shorter timeout: a request is cut within about 10% of its limit (at most 1 s).
 * Past either, Node reports ERR_HTTP_REQUEST_TIMEOUT to the app's clientErrorHandler, which answers 408.
 */
export function serverTimeouts(config: Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs'>): { requestTimeout: number; http: ServerOptions } {
  const { headersTimeoutMs, requestTimeoutMs } = config;
  const connectionsCheckingInterval = Math.max(10, Math.min(1000, Math.floor(Math.min(headersTimeoutMs, requestTimeoutMs) / 10)));
  return { requestTimeout: requestTimeoutMs, http: { headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval } };
}

/**
 * Caps the connections one client address (see clientAddress) holds open at once. A connection over the cap
 * never reaches the HTTP parser: it gets a 429 in the error shape and is closed, and the others are served as
 * before. `max` 0: no cap.
 */
export function capConnectionsPerAddress(server: Server, max: number): void {
  if (max === 0) return;
  const open = new Map<string, number>();
  // The HTTP server's own listener sets up the parser; it hears only the connections admitted here.
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const address = clientAddress(socket.remoteAddress);
    const count = open.get(address) ?? 0;
    if (count >= max) return refuse(socket, address, max);
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
    for (const listener of listeners) listener.call(server, socket);
  });
}

function refuse(socket: Socket, address: string, max: number): void {
  socket.on('error', () => {});
  // Whatever the client sent is read and dropped: closing with unread data would reset the connection, and the
  // client could lose the answer.
  socket.resume();
  socket.once('end', () => socket.destroy());
  socket.setTimeout(REFUSED_LINGER_MS, () => socket.destroy());
  const message = `Too many connections from ${address || 'this address'}: at most ${max} may be open at once; reuse connections or retry after 1 s`;
  socket.end(rawErrorResponse(new ApiError(429, message, {}, { 'retry-after': '1' })));
}
