/** The console's files at /console (built into dist/console by `npm run build`), and nothing beside them. */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const get = (url: string) => h.strata.app.inject({ method: 'GET', url });

describe.skipIf(!existsSync(new URL('../../dist/console/index.html', import.meta.url)))('console files', () => {
  it('serves the page at /console and /console/, without a token', async () => {
    for (const url of ['/console', '/console/']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.body).toContain('<div id="app">');
    }
  });

  it('serves its built scripts with a long cache life', async () => {
    const script = /src="\/console\/(assets\/[^"]+\.js)"/.exec((await get('/console')).body)![1];
    const res = await get(`/console/${script}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.headers['cache-control']).toContain('immutable');
  });

  it('serves nothing outside its folder', async () => {
    for (const url of ['/console/assets/..%2f..%2f..%2fpackage.json', '/console/%2e%2e/%2e%2e/package.json', '/console/assets/missing.js', '/console/index.html']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body).not.toContain('"dependencies"');
    }
  });
});
