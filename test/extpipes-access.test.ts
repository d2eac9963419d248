/**
 * Who may do what with extraction pipelines: `extractionpipelinesAcl`, `extractionconfigsAcl` and
 * `extractionrunsAcl` scoped to data sets (and the latter two to pipelines) reach only the pipelines in
 * their scope, and what is outside reads exactly as what does not exist; writing a pipeline into a data set
 * also needs `datasetsAcl:READ` on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
let dsA: number;
let dsB: number;
let pipeA: number;
const tokens: Record<string, Record<string, string>> = {};
const as = (who: string, method: string, path: string, body?: unknown) => h.request(method, `${h.base}${path}`, body, tokens[who]);

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('pipes-a', 'no-ds-read', 'runs-a', 'configs-a', 'runs-pipe') });
  [dsA, dsB] = (await h.post('/datasets', { items: [{ externalId: 'xpa-a' }, { externalId: 'xpa-b' }] })).body.items.map((d: { id: number }) => d.id);
  const pipes = await h.post('/extpipes', {
    items: [
      { externalId: 'in-a', name: 'A', dataSetId: dsA },
      { externalId: 'in-b', name: 'B', dataSetId: dsB },
    ],
  });
  pipeA = pipes.body.items[0].id;
  for (const externalId of ['in-a', 'in-b']) {
    await h.post('/extpipes/config', { externalId, config: `c ${externalId}` });
    await h.post('/extpipes/runs', { items: [{ externalId, status: 'seen' }] });
  }
  const inA = { datasetScope: { ids: [dsA] } };
  const rw = ['READ', 'WRITE'];
  const token = async (id: string, capabilities: unknown[]) => (tokens[id] = bearer(await namedClientToken(h, id, capabilities)));
  await token('pipes-a', [capability('extractionPipelinesAcl', rw, inA), capability('datasetsAcl', ['READ'], { idscope: { ids: [dsA] } })]);
  await token('no-ds-read', [capability('extractionPipelinesAcl', rw)]);
  await token('runs-a', [capability('extractionRunsAcl', rw, inA)]);
  await token('configs-a', [capability('extractionConfigsAcl', rw, inA)]);
  await token('runs-pipe', [capability('extractionRunsAcl', rw, { extractionpipelinescope: { ids: [pipeA] } })]);
});
afterAll(() => h.close());

const externalIds = (items: Array<{ externalId: string }>) => items.map((p) => p.externalId).sort();

describe('pipelines scoped to a data set', () => {
  it('are all the principal sees, in lists, by ids and by id', async () => {
    expect(externalIds((await as('pipes-a', 'GET', '/extpipes')).body.items)).toEqual(['in-a']);
    expect(externalIds((await as('pipes-a', 'POST', '/extpipes/list', { filter: { externalIdPrefix: 'in-' } })).body.items)).toEqual(['in-a']);
    const hidden = await as('pipes-a', 'POST', '/extpipes/byids', { items: [{ externalId: 'in-b' }] });
    const absent = await as('pipes-a', 'POST', '/extpipes/byids', { items: [{ externalId: 'in-z' }] });
    expect(errorMessage(hidden, 400)).toBe(errorMessage(absent, 400).replace('in-z', 'in-b'));
    const b = (await h.post('/extpipes/byids', { items: [{ externalId: 'in-b' }] })).body.items[0];
    expect(errorMessage(await as('pipes-a', 'GET', `/extpipes/${b.id}`), 400)).toBe(errorMessage(await as('pipes-a', 'GET', '/extpipes/987654321'), 400).replace('987654321', String(b.id)));
  });

  it('are written only in the scope, the other data set unseen as if absent', async () => {
    expect((await as('pipes-a', 'POST', '/extpipes', { items: [{ externalId: 'new-a', name: 'n', dataSetId: dsA }] })).status).toBe(200);
    expect((await as('pipes-a', 'POST', '/extpipes', { items: [{ externalId: 'new-b', name: 'n', dataSetId: dsB }] })).status).toBe(403);
    const update = await as('pipes-a', 'POST', '/extpipes/update', { items: [{ externalId: 'in-b', update: { name: { set: 'x' } } }] });
    expect(update.body.error.missing).toEqual([{ externalId: 'in-b' }]);
    expect((await as('pipes-a', 'POST', '/extpipes/delete', { items: [{ externalId: 'in-b' }] })).body.error.missing).toEqual([{ externalId: 'in-b' }]);
    expect((await h.post('/extpipes/byids', { items: [{ externalId: 'in-b' }] })).body.items[0].name).toBe('B');
  });

  it('need datasetsAcl:READ on the data set written into, and write nothing without it', async () => {
    const res = await as('no-ds-read', 'POST', '/extpipes', { items: [{ externalId: 'no-read', name: 'n', dataSetId: dsA }] });
    expect(errorMessage(res, 403)).toBe(`items[0].dataSetId: writing an extraction pipeline into data set ${dsA} needs datasetsAcl:READ on it`);
    expect((await h.post('/extpipes/byids', { items: [{ externalId: 'no-read' }], ignoreUnknownIds: true })).body.items).toEqual([]);
    const move = await as('no-ds-read', 'POST', '/extpipes/update', { items: [{ externalId: 'in-a', update: { dataSetId: { set: dsB } } }] });
    expect(errorMessage(move, 403)).toMatch(/^items\[0\]\.update\.dataSetId\.set: .*datasetsAcl:READ/);
    expect((await h.post('/extpipes/byids', { items: [{ externalId: 'in-a' }] })).body.items[0].dataSetId).toBe(dsA);
    expect((await as('no-ds-read', 'POST', '/extpipes/update', { items: [{ externalId: 'in-a', update: { name: { set: 'A2' } } }] })).status).toBe(200);
  });
});

describe('runs and configurations scoped to a data set or to pipelines', () => {
  it('reach the pipelines in the scope; others answer as pipelines that do not exist', async () => {
    for (const [i, who] of ['runs-a', 'runs-pipe'].entries()) {
      expect((await as(who, 'GET', '/extpipes/runs?externalId=in-a')).body.items).toHaveLength(1 + i);
      expect((await as(who, 'POST', '/extpipes/runs', { items: [{ externalId: 'in-a', status: 'success' }] })).status).toBe(200);
      const hidden = errorMessage(await as(who, 'GET', '/extpipes/runs?externalId=in-b'), 400);
      expect(hidden).toBe(errorMessage(await as(who, 'GET', '/extpipes/runs?externalId=in-z'), 400).replace('in-z', 'in-b'));
      expect(errorMessage(await as(who, 'POST', '/extpipes/runs', { items: [{ externalId: 'in-b', status: 'failure' }] }), 400)).toMatch(/in-b.*does not exist/);
      expect(errorMessage(await as(who, 'POST', '/extpipes/runs/list', { filter: { externalId: 'in-b' } }), 400)).toMatch(/in-b.*does not exist/);
    }
    expect((await h.get('/extpipes/runs?externalId=in-b')).body.items).toHaveLength(1);
    const hidden = errorMessage(await as('configs-a', 'GET', '/extpipes/config?externalId=in-b'), 400);
    expect(hidden).toBe(errorMessage(await as('configs-a', 'GET', '/extpipes/config?externalId=in-z'), 400).replace('in-z', 'in-b'));
    expect((await as('configs-a', 'GET', '/extpipes/config?externalId=in-a')).body.config).toBe('c in-a');
    expect((await as('configs-a', 'POST', '/extpipes/config', { externalId: 'in-a', config: 'new' })).body.revision).toBe(2);
    expect(errorMessage(await as('configs-a', 'POST', '/extpipes/config/revert', { externalId: 'in-b', revision: 1 }), 400)).toMatch(/in-b.*does not exist/);
    expect(errorMessage(await as('configs-a', 'GET', '/extpipes/config/revisions?externalId=in-b'), 400)).toMatch(/in-b.*does not exist/);
    expect((await h.get('/extpipes/config/revisions?externalId=in-b')).body.items).toHaveLength(1);
  });

  it('need the capability of their own ACL', async () => {
    expect(errorMessage(await as('runs-a', 'GET', '/extpipes/config?externalId=in-a'), 403)).toMatch(/extractionconfigsAcl:READ/i);
    expect(errorMessage(await as('configs-a', 'GET', '/extpipes/runs?externalId=in-a'), 403)).toMatch(/extractionrunsAcl:READ/i);
    expect(errorMessage(await as('runs-a', 'GET', '/extpipes'), 403)).toMatch(/extractionpipelinesAcl:READ/i);
  });
});
