/**
 * Regular expressions a request gives (the list filter's `nameRegex` and `queryRegex`), run by V8's
 * linear-time engine (the `l` flag), so that no pattern can backtrack catastrophically and stall the
 * server: what that engine cannot run in linear time (backreferences, lookarounds, repetitions too large
 * to expand) is refused like a pattern that does not compile.
 */
import { setFlagsFromString } from 'node:v8';
import { badRequest } from '../../http/errors.js';

// The engine sits behind a V8 option that only makes the `l` flag available: no other expression changes.
setFlagsFromString('--enable-experimental-regexp-engine');

/** The pattern compiled for the linear-time engine, or a 400 naming `path` with the reason it is refused. */
export function linearRegex(pattern: string, path: string): RegExp {
  try {
    return new RegExp(pattern, 'l');
  } catch (error) {
    throw badRequest(`${path}: ${(error as Error).message}`);
  }
}
