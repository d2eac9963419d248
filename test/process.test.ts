/**
 * The real command: `node dist/cli.js serve` (what `npm start` runs), a killed process, and a restart.
 * `npm test` builds dist/ first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { freePort } from './support/net.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

async function start(port: number): Promise<{ child: ChildProcess; output: string }> {
  const child = spawn(process.execPath, ['dist/cli.js', 'serve', '--port', String(port), '--data-dir', dir], {
    env: { ...process.env, STRATA_PROJECTS: 'dev', STRATA_DEV_CLIENT_SECRET: '', ...engine },
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
  it('prints how to call it, and keeps acknowledged writes across a killed process', async () => {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const first = await start(port);
    expect(first.output).toContain(`Base URL:       ${base}/api/v1/projects/dev`);
    expect(first.output).toContain(`Token URL:      ${base}/oauth2/token`);
    expect(first.output).toContain('Client id:      strata-admin');
    expect(first.output).toMatch(/curl -s http:\/\/localhost:\d+\/api\/v1\/projects\/dev\/events -H "Authorization: Bearer \$TOKEN"/);
    const secret = /Client secret:\s+(\S+)/.exec(first.output)![1];

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
    expect(second.output).toContain(secret);
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
