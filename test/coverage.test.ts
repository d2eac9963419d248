/**
 * docs/coverage.md is the coverage table of the committed reference catalog and the operations the server
 * serves. `npm run coverage` rewrites it; this test fails when it is out of date.
 */
import { describe, expect, it } from 'vitest';
import { readReferenceCatalog } from '../src/http/reference-catalog.js';
import { coverageTable, type OpenApiPaths } from './support/coverage-table.js';
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
});
