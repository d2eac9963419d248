/**
 * docs/coverage.md is the coverage table of the committed reference catalog and the operations the server
 * serves. `npm run coverage` rewrites it; this test fails when it is out of date. Every operation the spec
 * names (catalog/spec/operations.tsv) is served.
 */
import { describe, expect, it } from 'vitest';
import { operationKey, readReferenceCatalog } from '../src/http/reference-catalog.js';
import { coverageTable, readSpecCatalog, specServed, type OpenApiPaths } from './support/coverage-table.js';
import { startHarness } from './support/harness.js';

describe('docs/coverage.md', () => {
  it('lists every operation of the reference, served or not yet, as the server serves them now', async () => {
    const h = await startHarness();
    try {
      const document = (await h.strata.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiPaths;
      const table = coverageTable(readReferenceCatalog(), document);
      await expect(table).toMatchFileSnapshot('../docs/coverage.md', 'docs/coverage.md is out of date: run `npm run coverage` and commit it');
    } finally {
      await h.close();
    }
  });

  it('serves every operation the spec names', async () => {
    const h = await startHarness();
    try {
      const document = (await h.strata.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiPaths;
      const served = new Set(Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => operationKey(method, path))));
      const spec = readSpecCatalog();
      expect(spec.length).toBeGreaterThan(100);
      expect(spec.filter((op) => !specServed(op, readReferenceCatalog(), served)).map((op) => `${op.method} ${op.path}`)).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
