/**
 * Two apps on one database, as two Strata processes behind a load balancer: what one changes in the schema
 * (containers, views) the other sees at its next request, although each keeps the schema it read between
 * changes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { newPostgresDatabase, testEngine } from '../support/test-store.js';

let a: Harness;
let b: Harness;
let dir: string;
const C = { type: 'container', space: 'cache', externalId: 'Thing' };
const V = (version: string) => ({ type: 'view', space: 'cache', externalId: 'Thing', version });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-schema-cache-'));
  const env: Record<string, string> = testEngine() === 'postgres' ? { STRATA_DATABASE_URL: await newPostgresDatabase() } : {};
  a = await startHarness({ dataDir: dir }, env);
  b = await startHarness({ dataDir: dir }, env);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function ok(h: Harness, path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const node = (externalId: string, version: string, properties: Record<string, unknown>) => ({
  instanceType: 'node',
  space: 'cache',
  externalId,
  sources: [{ source: V(version), properties }],
});

describe('the schema kept between requests', () => {
  it('follows changes made through another app on the same database', async () => {
    await ok(a, '/models/spaces', { items: [{ space: 'cache' }] });
    await ok(a, '/models/containers', { items: [{ space: 'cache', externalId: 'Thing', properties: { n: { type: { type: 'int32' } } } }] });
    await ok(a, '/models/views', { items: [{ space: 'cache', externalId: 'Thing', version: '1', properties: { n: { container: C, containerPropertyIdentifier: 'n' } } }] });
    await ok(a, '/models/instances', { items: [node('one', '1', { n: 1 })] });
    await ok(a, '/models/instances/list', { sources: [{ source: V('1') }] });

    // Through b: a new property, and a view version that maps it.
    await ok(b, '/models/containers', { items: [{ space: 'cache', externalId: 'Thing', properties: { label: { type: { type: 'text' } } } }] });
    await ok(b, '/models/views', {
      items: [{ space: 'cache', externalId: 'Thing', version: '2', properties: { n: { container: C, containerPropertyIdentifier: 'n' }, label: { container: C, containerPropertyIdentifier: 'label' } } }],
    });
    await ok(a, '/models/instances', { items: [node('two', '2', { n: 2, label: 'second' })] });
    const list = await ok(a, '/models/instances/list', { sources: [{ source: V('2') }], sort: [{ property: ['cache', 'Thing/2', 'n'] }] });
    expect(list.items.map((i: any) => i.properties.cache['Thing/2'])).toEqual([{ n: 1 }, { n: 2, label: 'second' }]);

    // Through b: the view version goes, then the container.
    await ok(b, '/models/views/delete', { items: [{ space: 'cache', externalId: 'Thing', version: '2' }] });
    expect(errorMessage(await a.post('/models/instances', { items: [node('three', '2', { n: 3 })] }), 400)).toMatch(/cache:Thing\/2/);
    await ok(b, '/models/views/delete', { items: [{ space: 'cache', externalId: 'Thing', version: '1' }] });
    await ok(b, '/models/containers/delete', { items: [{ space: 'cache', externalId: 'Thing' }] });
    const gone = await a.post('/models/instances', { items: [{ instanceType: 'node', space: 'cache', externalId: 'four', sources: [{ source: C, properties: { n: 4 } }] }] });
    expect(errorMessage(gone, 400)).toMatch(/cache:Thing/);
    const stats = (await a.get('/models/statistics')).body;
    expect([stats.containers.count, stats.containerProperties.count, stats.views.count]).toEqual([0, 0, 0]);
  });
});
