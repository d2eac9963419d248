/**
 * The official JavaScript client (`@cognite/sdk`) against a Strata listening on a loopback port, as its
 * users point it at a server: a base URL, a project and a token provider.
 *
 * With STRATA_CONFORM set (see `npm run conform`), the client talks to Strata through the reference's
 * conformance proxy (`api-conform`, from ../shared/tools or the path in STRATA_API_CONFORM), which checks
 * every status code and body against the reference; each harness writes the proxy's report to the
 * directory named by STRATA_CONFORM when it closes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CogniteClient, CogniteError, CogniteMultiError } from '@cognite/sdk';
import { CONFIG_SECTIONS } from '../../src/areas.js';
import { loadConfig, type Config } from '../../src/config.js';
import { buildApp, type BuildOptions, type Strata } from '../../src/app.js';
import { freePort } from './net.js';
import { storeEnv } from './test-store.js';

export interface SdkHarness {
  strata: Strata;
  /** Strata's own origin (the identity provider's issuer). */
  origin: string;
  /** The origin the client talks to: Strata's, or the conformance proxy's in front of it. */
  baseUrl: string;
  token: string;
  client: CogniteClient;
  /** A client for `project` with a token from the built-in client `clientId` (see STRATA_CLIENTS). */
  clientFor(clientId: string, secret: string, project?: string): Promise<CogniteClient>;
  /**
   * A request straight to Strata as the administrator, past the conformance proxy: for setting up what a
   * test needs from other resources without counting it in the report. `path` is under the project.
   */
  seed<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

export interface SdkHarnessOptions {
  config?: Partial<Config>;
  env?: Record<string, string>;
  build?: BuildOptions;
  /** Name of the conformance report this harness writes under STRATA_CONFORM (defaults to the port). */
  name?: string;
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The conformance proxy's script, when conformance is asked for and the tool is on this machine. */
function conformTool(): string | undefined {
  if (!process.env.STRATA_CONFORM) return undefined;
  const tool = process.env.STRATA_API_CONFORM ?? resolve(root, '..', 'shared', 'tools', 'api-conform');
  if (!existsSync(tool)) throw new Error(`STRATA_CONFORM is set but the conformance proxy is not at ${tool}; set STRATA_API_CONFORM to its path`);
  return tool;
}

export async function tokenFor(origin: string, clientId: string, secret: string): Promise<string> {
  const res = await fetch(`${origin}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  if (res.status !== 200) throw new Error(`token for ${clientId}: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/**
 * A client as its users make one. Without `authenticate()` it sends its first request without a token and
 * retries it after the 401; authenticating first keeps that 401 out of the conformance report.
 */
export async function sdkClient(baseUrl: string, project: string, token: string): Promise<CogniteClient> {
  const client = new CogniteClient({ appId: 'strata-tests', project, baseUrl, oidcTokenProvider: async () => token });
  await client.authenticate();
  return client;
}

export async function startSdkHarness(opts: SdkHarnessOptions = {}): Promise<SdkHarness> {
  const config: Config = {
    ...loadConfig([], { STRATA_DATA_DIR: ':memory:', STRATA_PROJECTS: 'dev,other', ...(await storeEnv()), ...opts.env }, CONFIG_SECTIONS),
    ...opts.config,
  };
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const strata = await buildApp({ ...config, port, publicUrl: origin }, { logger: false, ...opts.build });
  await strata.app.listen({ port, host: '127.0.0.1' });

  let proxy: ChildProcess | undefined;
  let baseUrl = origin;
  const tool = conformTool();
  if (tool) {
    const listen = await freePort();
    const dir = resolve(root, process.env.STRATA_CONFORM!);
    mkdirSync(dir, { recursive: true });
    const report = join(dir, `${opts.name ?? port}.json`);
    proxy = spawn(process.execPath, [tool, '--upstream', origin, '--listen', String(listen), '--json', report], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((ready, fail) => {
      proxy!.stderr!.on('data', (d: Buffer) => d.toString().includes('api-conform:') && ready());
      proxy!.once('exit', (code) => fail(new Error(`api-conform exited with ${code}`)));
    });
    baseUrl = `http://127.0.0.1:${listen}`;
  }

  const token = await tokenFor(origin, strata.idp.devClient.clientId, strata.idp.devClient.secret);
  return {
    strata,
    origin,
    baseUrl,
    token,
    client: await sdkClient(baseUrl, config.projects[0], token),
    async clientFor(clientId, secret, project = config.projects[0]) {
      return await sdkClient(baseUrl, project, await tokenFor(origin, clientId, secret));
    },
    async seed(method, path, body) {
      const res = await strata.app.inject({
        method,
        url: `/api/v1/projects/${config.projects[0]}${path}`,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async close() {
      if (proxy && proxy.exitCode === null) {
        const exited = new Promise((done) => proxy!.once('exit', done));
        proxy.kill('SIGTERM');
        await exited;
      }
      await strata.close();
    },
  };
}

/** What a refused call tells the client's user, whether the client reports it as one error or per chunk. */
export interface ClientFailure {
  status: number;
  message: string;
  missing?: object[];
  duplicated?: unknown[];
}

/** The failure of a call that must fail. */
export async function clientFailure(call: Promise<unknown>): Promise<ClientFailure> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof CogniteMultiError) {
    const first = err.errors[0] as CogniteError;
    const some = <T>(list: T[]) => (list.length ? list : undefined);
    return { status: err.status!, message: first.errorMessage, missing: some(err.missing), duplicated: some(err.duplicated) };
  }
  if (err instanceof CogniteError) return { status: err.status, message: err.errorMessage, missing: err.missing, duplicated: err.duplicated };
  throw new Error(err === undefined ? 'expected the call to fail' : `expected an error of the client, got ${String(err)}`);
}
