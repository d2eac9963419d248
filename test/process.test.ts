/**
 * The real command: `node dist/cli.js serve` (what `npm start` runs), a killed process, and a restart.
 * `npm test` builds dist/ first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from './support/net.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasProgram } from './support/external.js';
import { storeEnv } from './support/test-store.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-proc-'));
const children: ChildProcess[] = [];
// The engine of this run: the data directory's SQLite file, or a PostgreSQL database of its own.
let engine: Record<string, string> = {};
beforeAll(async () => {
  engine = await storeEnv();
});
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ ...process.env, STRATA_PROJECTS: 'dev', STRATA_DEV_CLIENT_SECRET: '', ...engine });

/** A command that ends by itself: its exit status and output. */
function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['dist/cli.js', ...args], { env: env(), encoding: 'utf8', timeout: 30_000 });
}

async function start(port: number): Promise<{ child: ChildProcess; output: string }> {
  const child = spawn(process.execPath, ['dist/cli.js', 'serve', '--port', String(port), '--data-dir', dir], {
    env: env(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      output += d;
      if (output.includes('Get a token')) setTimeout(resolve, 20);
    });
    child.stderr!.on('data', (d) => (output += d));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return { child, output };
}

async function tokenFrom(base: string, secret: string): Promise<string> {
  const res = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'strata-admin', client_secret: secret }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('strata serve', () => {
  it('prints how to call it, the administrator secret only when it is made, and keeps acknowledged writes across a killed process', async () => {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const first = await start(port);
    expect(first.output).toContain(`Base URL:       ${base}/api/v1/projects/dev`);
    expect(first.output).toContain(`Token URL:      ${base}/oauth2/token`);
    expect(first.output).toContain(`Web console:    ${base}/console`);
    expect(first.output).toContain('Client id:      strata-admin');
    expect(first.output).toMatch(/curl -s http:\/\/localhost:\d+\/api\/v1\/projects\/dev\/events -H "Authorization: Bearer \$TOKEN"/);
    const secret = /Client secret:\s+(\S+)  \(generated now and shown only this once; `strata admin-secret`/.exec(first.output)![1];

    const token = await tokenFrom(base, secret);
    const created = await fetch(`${base}/api/v1/projects/dev/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ externalId: 'survives', description: 'written before the kill' }] }),
    });
    expect(created.status).toBe(201);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await start(port);
    expect(second.output).not.toContain(secret);
    expect(second.output).toContain('Client secret:  kept in the store; `strata admin-secret` (from a clone: npm run -s strata -- admin-secret) prints it');
    const shown = run(['admin-secret', '--data-dir', dir]);
    expect([shown.status, shown.stdout, shown.stderr]).toEqual([0, `${secret}\n`, '']);
    // The signing key is kept too: a token from before the restart still works.
    const res = await fetch(`${base}/api/v1/projects/dev/events/byids`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ externalId: 'survives' }] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: Array<{ description: string }> };
    expect(body.items[0].description).toBe('written before the kill');
    second.child.kill('SIGTERM');
  });
});

describe('strata help and version', () => {
  it('answers help, -h and --help with every option, its variable, its meaning and its default', () => {
    const outputs = [['help'], ['-h'], ['--help'], ['serve', '--help']].map((args) => run(args));
    for (const out of outputs) expect([out.status, out.stdout]).toEqual([0, outputs[0].stdout]);
    const help = outputs[0].stdout;
    expect(help).toMatch(/^usage: strata \[command\] \[options\]/);
    expect(help).toContain('admin-secret');
    expect(help).toContain('  --port (STRATA_PORT)\n      HTTP port (default: 4000)');
    expect(help).toContain('  --data-dir (STRATA_DATA_DIR)\n      directory of the embedded store (strata.db); :memory: for a throwaway store (default: ./data)');
    expect(help).toContain('  STRATA_DEV_CLIENT_SECRET (environment only)\n      secret of the administrator client strata-admin (default: generated once, kept in the store)');
    // Every option is listed with a meaning and a default.
    const options = [...help.matchAll(/^ {2}(--[a-z-]+) \(STRATA_[A-Z_]+\)\n {6}(.+)$/gm)];
    expect(options.length).toBeGreaterThan(35);
    for (const [, flag, line] of options) expect(line, flag).toMatch(/^[a-zA-Z].* \(default: .+\)$/);
    expect(run(['serve', '--no-such-option', 'x']).stderr).toBe('strata: unknown option --no-such-option; `strata help` lists the options\n');
  });

  it('answers version, -v and --version with the version of the package', () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const args of [['version'], ['-v'], ['--version']]) expect(run(args)).toMatchObject({ status: 0, stdout: `strata ${version}\n`, stderr: '' });
  });
});

describe('a busy port', () => {
  it('stops the start before anything is created, with one line naming the port and the flag that changes it', async () => {
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const empty = mkdtempSync(join(tmpdir(), 'strata-busy-'));
    const database = await storeEnv();
    try {
      const out = spawnSync(process.execPath, ['dist/cli.js', 'serve', '--port', String(port), '--data-dir', empty], { env: { ...env(), ...database }, encoding: 'utf8', timeout: 30_000 });
      expect(out.status).toBe(2);
      expect(out.stderr).toBe(`strata: port ${port} on 127.0.0.1 is in use by another program; choose another with --port (or STRATA_PORT)\n`);
      expect(out.stdout).toBe('');
      expect(readdirSync(empty)).toEqual([]);
      if (database.STRATA_DATABASE_URL) {
        const client = new pg.Client({ connectionString: database.STRATA_DATABASE_URL });
        await client.connect();
        try {
          const tables = await client.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`);
          expect(tables.rows[0].n).toBe(0);
        } finally {
          await client.end();
        }
      }
    } finally {
      holder.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe.runIf(hasProgram('curl', 'curl') && hasProgram('bash', 'bash'))('the printed token line', () => {
  it('gives a token with the right secret, and fails visibly with a wrong one', async () => {
    const port = await freePort();
    const fresh = mkdtempSync(join(tmpdir(), 'strata-token-'));
    const child = spawn(process.execPath, ['dist/cli.js', 'serve', '--port', String(port), '--data-dir', fresh], { env: { ...env(), ...(await storeEnv()) }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    try {
      let output = '';
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (d) => {
          output += d;
          if (output.includes('Authorization: Bearer $TOKEN')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
      });
      const line = /^ {2}(TOKEN=\$\(curl [^\n]*\\\n[^\n]*)$/m.exec(output)![1];
      const call = /^ {2}(curl -s [^\n]*)$/m.exec(output)![1];
      const secret = /Client secret:\s+(\S+)/.exec(output)![1];
      const shell = (script: string) => spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 30_000 });

      const good = shell(`${line}\n${call} -o /dev/null -w '%{http_code}'`);
      expect(good.stdout).toBe('200');
      const wrong = shell(`${line.replace(secret, 'not-the-secret')}\necho "[$TOKEN]"\n${call}`);
      expect(wrong.stderr).toMatch(/curl: \(22\).*401/);
      expect(wrong.stdout).toContain('[]');
      expect(wrong.stdout).toContain('no token after \\"Bearer\\"; did getting the access token fail?');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});
