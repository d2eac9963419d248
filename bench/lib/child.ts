/**
 * Starts `bench/server.js` as a child process (so the load generator does not share the server's event
 * loop) and talks to it over IPC. The child is killed when the runner exits, whatever the reason.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, Command, ParentMessage } from './protocol.js';

export interface ServerHandle {
  apiOrigin: string;
  noLayersOrigin?: string;
  /** The same app with a tiny project budget (servers.ts LIMITED_PROJECT_LIMITS). */
  limitedOrigin?: string;
  bareOrigin: string;
  clientId: string;
  clientSecret: string;
  pid: number;
  command<T = unknown>(cmd: Command, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export async function startServerChild(dataDir: string, startTimeoutMs = 30_000): Promise<ServerHandle> {
  const entry = fileURLToPath(new URL('../server.js', import.meta.url));
  const child = fork(entry, [], {
    env: { ...process.env, BENCH_DATA_DIR: dataDir },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: (process.env.BENCH_SERVER_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean),
  });
  live.add(child);
  child.once('exit', () => live.delete(child));

  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let seq = 0;
  child.on('message', (raw) => {
    const m = raw as ChildMessage;
    if (m.type !== 'reply') return;
    const p = pending.get(m.seq);
    if (!p) return;
    pending.delete(m.seq);
    if (m.ok) p.resolve(m.result);
    else p.reject(new Error(`server child: ${m.error}`));
  });
  child.once('exit', (code, signal) => {
    for (const p of pending.values()) p.reject(new Error(`server child exited (code ${code}, signal ${signal})`));
    pending.clear();
  });

  const ready = await new Promise<Extract<ChildMessage, { type: 'ready' }>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server child did not start within ${startTimeoutMs} ms`)), startTimeoutMs);
    child.on('message', (raw) => {
      const m = raw as ChildMessage;
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server child exited during start-up (code ${code})`));
    });
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });

  function command<T>(cmd: Command, timeoutMs = 60_000): Promise<T> {
    const n = ++seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(n);
        reject(new Error(`server child did not answer ${cmd.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(n, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.send({ ...cmd, seq: n } as ParentMessage);
    });
  }

  return {
    apiOrigin: ready.apiOrigin,
    noLayersOrigin: ready.noLayersOrigin,
    limitedOrigin: ready.limitedOrigin,
    bareOrigin: ready.bareOrigin,
    clientId: ready.clientId,
    clientSecret: ready.clientSecret,
    pid: ready.pid,
    command,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await command({ type: 'shutdown' }, 10_000);
      } catch {
        // fall through to the kill below
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
