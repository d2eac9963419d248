/** Messages between the benchmark runner and its server child process (over the Node IPC channel). */
import type { LatencySummary, LoopDelaySummary } from './stats.js';

export type ParentMessage = { seq: number } & (
  | { type: 'bare'; payload: string }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  | { type: 'memory' }
  | { type: 'cpu' }
  | { type: 'loop-delay-start' }
  | { type: 'loop-delay-stop' }
  | { type: 'capture-start' }
  | { type: 'capture-stop' }
  | { type: 'shutdown' }
);

export type ChildMessage =
  | { type: 'ready'; apiOrigin: string; noLayersOrigin?: string; limitedOrigin?: string; bareOrigin: string; clientId: string; clientSecret: string; pid: number }
  | { type: 'reply'; seq: number; ok: boolean; result?: unknown; error?: string };

/** A ParentMessage before the runner numbers it. */
export type Command = ParentMessage extends infer M ? (M extends { seq: number } ? Omit<M, 'seq'> : never) : never;

/** The server child's event-loop delay over a window (ms, beyond the sampling interval): how long a ready request could have waited. */
export interface LoopDelay extends LoopDelaySummary {
  /**
   * The limited app's responses in the same window, timed inside the server (ms): from the request's arrival
   * (its headers parsed) to the last byte of the response handed to the socket.
   */
  limited: LatencySummary;
}
