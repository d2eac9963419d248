/** Messages between the benchmark runner and its server child process (over the Node IPC channel). */

export type ParentMessage = { seq: number } & (
  | { type: 'bare'; payload: string }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  | { type: 'memory' }
  | { type: 'cpu' }
  | { type: 'capture-start' }
  | { type: 'capture-stop' }
  | { type: 'shutdown' }
);

export type ChildMessage =
  | { type: 'ready'; apiOrigin: string; noLayersOrigin?: string; limitedOrigin?: string; bareOrigin: string; clientId: string; clientSecret: string; pid: number }
  | { type: 'reply'; seq: number; ok: boolean; result?: unknown; error?: string };

/** A ParentMessage before the runner numbers it. */
export type Command = ParentMessage extends infer M ? (M extends { seq: number } ? Omit<M, 'seq'> : never) : never;
