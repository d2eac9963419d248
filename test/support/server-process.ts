/**
 * A Strata server in a child process (`node dist/cli.js serve`), for tests of what only separate processes
 * show: a killed process, several processes on one database. It resolves once the server says it serves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './net.js';

export interface ServerProcess {
  base: string;
  child: ChildProcess;
}

/** Starts a server on a free port with `env` added to this process's environment; `children` collects it for cleanup. */
export async function startServerProcess(env: Record<string, string>, children: ChildProcess[]): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/cli.js', 'serve', '--port', String(port)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      output += d;
      if (output.includes('Get a token')) resolve();
    });
    child.stderr!.on('data', (d) => (output += d));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return { base: `http://127.0.0.1:${port}`, child };
}
