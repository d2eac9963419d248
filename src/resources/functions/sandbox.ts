/**
 * Running a function's handler, never in Strata's own process: a child process in a temporary directory of
 * its own (the unpacked code, nothing else), with an environment holding only what it is handed, as an
 * unprivileged user id of its own when Strata runs as root (no other call runs as it at the same time, so
 * none reads another's files, environment or token), under `prlimit` limits on CPU time, address space
 * (Python; Node.js holds its heap with --max-old-space-size instead, as it reserves more address space than
 * it uses), file size and open files, in a process group of its own that is killed whole at the wall-clock
 * timeout or when the call is stopped. What it writes is kept within LOG_LIMITS, what it answers within
 * RESPONSE_BYTES.
 *
 * Timers here are real ones: the child runs in real time, whatever clock the app's records use.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { unpackCode } from './code.js';
import { NODE_RUNNER, PYTHON_RUNNER } from './runners.js';
import type { FunctionsSettings } from './settings.js';

export const LOG_LIMITS = { lines: 1000, bytes: 1024 * 1024, lineLength: 4096 } as const;
export const RESPONSE_BYTES = 1024 * 1024;
/**
 * The user and group ids calls run as when Strata runs as root: CALL_IDS_BASE, plus a thousand per process
 * (by its pid, so processes on one host keep apart), plus the slot of the call among those the process
 * runs at once. None has an entry in /etc/passwd, and none owns anything on the host.
 */
const CALL_IDS_BASE = 2_000_000_000;
const MAX_SLOTS = 1000;
const slots = new Set<number>();

function takeSlot(): number {
  let slot = 0;
  while (slots.has(slot)) slot++;
  if (slot >= MAX_SLOTS) throw new Error(`more than ${MAX_SLOTS} calls at once in one process`);
  slots.add(slot);
  return slot;
}

function callUser(slot: number): { uid: number; gid: number } {
  const id = CALL_IDS_BASE + (process.pid % 1000) * MAX_SLOTS + slot;
  return { uid: id, gid: id };
}
const FILE_BYTES = 100 * 1024 * 1024;
const PATH = '/usr/local/bin:/usr/bin:/bin';
const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));

export type Language = 'python' | 'node';

/** The language of a handler file, by its extension; undefined for one no runner takes. */
export function languageOf(handler: string): Language | undefined {
  const ext = extname(handler);
  return ext === '.py' ? 'python' : ['.js', '.mjs', '.cjs'].includes(ext) ? 'node' : undefined;
}

export interface LogLine {
  timestamp: number;
  message: string;
}

export interface RunInput {
  zip: Uint8Array;
  handler: string;
  /** What the handler is given: `data`, `secrets`, `info` (function_call_info), and the credential it calls back with. */
  call: { data: unknown; secrets: Record<string, string>; info: Record<string, unknown>; project: string; baseUrl: string; token: string };
  envVars: Record<string, string>;
  memoryBytes: number;
  settings: FunctionsSettings;
  signal: AbortSignal;
  now(): number;
}

export type RunOutcome = { logs: LogLine[] } & (
  | { status: 'Completed'; response: unknown }
  | { status: 'Failed' | 'Timeout'; error: { message: string; trace?: string } }
);

/** The lines a child writes, kept within LOG_LIMITS. */
class Logs {
  readonly lines: LogLine[] = [];
  private bytes = 0;
  private partial = '';
  private cut = false;

  constructor(private readonly now: () => number) {}

  write(chunk: Buffer): void {
    const text = this.partial + chunk.toString('utf8');
    const parts = text.split('\n');
    this.partial = parts.pop()!;
    if (this.partial.length > LOG_LIMITS.lineLength) {
      parts.push(this.partial);
      this.partial = '';
    }
    for (const line of parts) this.add(line);
  }

  end(): LogLine[] {
    if (this.partial) this.add(this.partial);
    this.partial = '';
    return this.lines;
  }

  private add(line: string): void {
    if (this.cut) return;
    const message = line.length > LOG_LIMITS.lineLength ? `${line.slice(0, LOG_LIMITS.lineLength)}...` : line;
    this.bytes += Buffer.byteLength(message);
    if (this.lines.length >= LOG_LIMITS.lines || this.bytes > LOG_LIMITS.bytes) {
      this.cut = true;
      this.lines.push({ timestamp: this.now(), message: `(further output dropped: a call keeps at most ${LOG_LIMITS.lines} lines and ${LOG_LIMITS.bytes} bytes)` });
      return;
    }
    this.lines.push({ timestamp: this.now(), message });
  }
}

function limits(language: Language, input: RunInput, asRoot: boolean): string[] {
  const cpu = input.settings.timeoutSeconds + 1;
  // The process count is per user: with a user of its own, the call's processes and threads alone.
  const common = [`--cpu=${cpu}`, `--fsize=${FILE_BYTES}`, '--nofile=256', '--core=0', ...(asRoot ? ['--nproc=256'] : [])];
  return language === 'python' ? [...common, `--as=${input.memoryBytes}`] : common;
}

function command(language: Language, input: RunInput, runner: string): string[] {
  if (language === 'python') return [input.settings.python, '-I', '-B', runner];
  return [input.settings.node, `--max-old-space-size=${Math.max(16, Math.floor(input.memoryBytes / (1024 * 1024)))}`, runner];
}

/** Runs the handler of the code to its end (or its limits' end) and tells how it went. */
export async function runHandler(input: RunInput): Promise<RunOutcome> {
  const logs = new Logs(input.now);
  const failed = (message: string): RunOutcome => ({ status: 'Failed', error: { message }, logs: logs.end() });
  const language = languageOf(input.handler);
  if (!language) return failed(`${input.handler}: a handler is a .py file (Python) or a .js, .mjs or .cjs file (JavaScript)`);
  if (!PRLIMIT) return failed('prlimit (util-linux) is not installed on the server, so no call can run within its limits');
  const asRoot = process.getuid?.() === 0;
  const slot = asRoot ? takeSlot() : undefined;
  const owner = slot === undefined ? undefined : callUser(slot);
  const dir = await mkdtemp(join(tmpdir(), 'strata-call-'));
  try {
    if (owner) await chown(dir, owner.uid, owner.gid);
    await unpackCode(input.zip, input.handler, dir, owner);
    const runner = join(dir, language === 'python' ? '__strata_runner__.py' : '__strata_runner__.cjs');
    await writeFile(runner, language === 'python' ? PYTHON_RUNNER : NODE_RUNNER, { mode: 0o600 });
    if (owner) await chown(runner, owner.uid, owner.gid);
    return await run(language, input, dir, runner, logs, owner);
  } catch (error) {
    return failed(`the call could not start: ${(error as Error).message}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    if (slot !== undefined) slots.delete(slot);
  }
}

function run(language: Language, input: RunInput, dir: string, runner: string, logs: Logs, owner: { uid: number; gid: number } | undefined): Promise<RunOutcome> {
  const { call } = input;
  const env = {
    ...input.envVars,
    PATH,
    HOME: dir,
    TMPDIR: dir,
    LANG: 'C.UTF-8',
    PYTHONUNBUFFERED: '1',
    STRATA_PROJECT: call.project,
    STRATA_BASE_URL: call.baseUrl,
    STRATA_TOKEN: call.token,
  };
  const child = spawn(PRLIMIT!, [...limits(language, input, !!owner), '--', ...command(language, input, runner)], {
    cwd: dir,
    env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    ...(owner ?? {}),
  });
  return new Promise((resolve) => {
    let result = '';
    let resultBytes = 0;
    let ended: 'timeout' | 'stopped' | 'response' | undefined;
    const kill = (why: typeof ended) => {
      ended ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Gone already.
      }
    };
    const timer = setTimeout(() => kill('timeout'), input.settings.timeoutSeconds * 1000);
    const onAbort = () => kill('stopped');
    input.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (c: Buffer) => logs.write(c));
    child.stderr!.on('data', (c: Buffer) => logs.write(c));
    const out = child.stdio[3] as NodeJS.ReadableStream;
    out.on('data', (c: Buffer) => {
      resultBytes += c.length;
      if (resultBytes > RESPONSE_BYTES) kill('response');
      else result += c.toString('utf8');
    });
    out.on('error', () => {});
    child.stdin!.on('error', () => {});
    child.stdin!.end(JSON.stringify({ ...call, handler: input.handler }));
    child.on('error', (error) => finish({ status: 'Failed', error: { message: `the call could not start: ${error.message}` } }));
    child.on('close', (code, signal) => finish(outcome(code, signal)));

    let done = false;
    function finish(o: { status: 'Completed'; response: unknown } | { status: 'Failed' | 'Timeout'; error: { message: string; trace?: string } }) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      input.signal.removeEventListener('abort', onAbort);
      resolve({ ...o, logs: logs.end() } as RunOutcome);
    }

    function outcome(code: number | null, signal: NodeJS.Signals | null) {
      const seconds = input.settings.timeoutSeconds;
      if (ended === 'timeout' || signal === 'SIGXCPU') return { status: 'Timeout' as const, error: { message: `The call ran longer than its ${seconds} seconds` } };
      if (ended === 'stopped') return { status: 'Failed' as const, error: { message: 'The call was stopped' } };
      if (ended === 'response') return { status: 'Failed' as const, error: { message: `The response is larger than ${RESPONSE_BYTES} bytes` } };
      if (result) {
        try {
          const r = JSON.parse(result) as { ok: boolean; response?: unknown; message?: string; trace?: string };
          if (r.ok) return { status: 'Completed' as const, response: r.response ?? null };
          return { status: 'Failed' as const, error: { message: r.message ?? 'The handler failed', ...(r.trace ? { trace: r.trace } : {}) } };
        } catch {
          // The process ended while writing its outcome: told below.
        }
      }
      const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
      return {
        status: 'Failed' as const,
        error: { message: `The call's process ${how} before its handler returned; a process past its memory (${input.memoryBytes} bytes) ends so. Its output is in the call's logs` },
      };
    }
  });
}
