/**
 * Child-process entry of the benchmark: starts the Strata apps (servers.ts) and the bare Fastify app on 127.0.0.1, then
 * answers the runner over the IPC channel (bare payload, CPU profiling windows, shutdown). Exits when the
 * runner goes away.
 *
 *   node .bench-build/bench/server.js   (started by bench/run.ts; needs BENCH_DATA_DIR and an IPC channel)
 */
import './lib/assets.js';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ChildMessage, LoopDelay, ParentMessage } from './lib/protocol.js';
import { startServers } from './lib/servers.js';
import { recordLoopDelay, summarize, type LoopDelaySummary } from './lib/stats.js';

if (!process.send) {
  console.error('bench/server.js is started by the benchmark runner (it needs an IPC channel)');
  process.exit(2);
}
const dataDir = process.env.BENCH_DATA_DIR;
if (!dataDir) {
  console.error('BENCH_DATA_DIR is not set');
  process.exit(2);
}

const send = (m: ChildMessage): void => {
  process.send!(m);
};

const servers = await startServers(dataDir, { capture: process.env.BENCH_CAPTURE !== '0', noLayers: true, limited: true });
let session: Session | undefined;
let loopDelay: (() => LoopDelaySummary) | undefined;
let limitedTimes: number[] = [];
const timeLimited = (_req: IncomingMessage, res: ServerResponse): void => {
  const t0 = performance.now();
  res.once('finish', () => void limitedTimes.push(performance.now() - t0));
};

process.on('disconnect', () => process.exit(1));

process.on('message', (raw) => {
  const m = raw as ParentMessage;
  void handle(m).then(
    (result) => send({ type: 'reply', seq: m.seq, ok: true, result }),
    (err: unknown) => send({ type: 'reply', seq: m.seq, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});

async function handle(m: ParentMessage): Promise<unknown> {
  switch (m.type) {
    case 'bare':
      servers.setBarePayload(m.payload);
      return null;
    case 'profile-start':
      if (!session) {
        session = new Session();
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 200 });
      }
      await session.post('Profiler.start');
      return null;
    case 'profile-stop': {
      if (!session) throw new Error('profiler not started');
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(m.file, JSON.stringify(profile));
      return m.file;
    }
    case 'memory':
      return process.memoryUsage();
    case 'cpu': {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    }
    case 'loop-delay-start':
      loopDelay?.();
      loopDelay = recordLoopDelay();
      limitedTimes = [];
      servers.limitedServer?.on('request', timeLimited);
      return null;
    case 'loop-delay-stop': {
      if (!loopDelay) throw new Error('loop delay not started');
      servers.limitedServer?.off('request', timeLimited);
      const result: LoopDelay = { ...loopDelay(), limited: summarize(limitedTimes) };
      loopDelay = undefined;
      return result;
    }
    case 'capture-start':
      if (!servers.recorder) throw new Error('SQL capture is off (BENCH_CAPTURE=0)');
      servers.recorder.start();
      return null;
    case 'capture-stop':
      if (!servers.recorder) throw new Error('SQL capture is off (BENCH_CAPTURE=0)');
      return servers.recorder.stop();
    case 'shutdown':
      await servers.close();
      setImmediate(() => process.exit(0));
      return null;
  }
}

send({
  type: 'ready',
  apiOrigin: servers.apiOrigin,
  noLayersOrigin: servers.noLayersOrigin,
  limitedOrigin: servers.limitedOrigin,
  bareOrigin: servers.bareOrigin,
  clientId: servers.clientId,
  clientSecret: servers.clientSecret,
  pid: process.pid,
});
