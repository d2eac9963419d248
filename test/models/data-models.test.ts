/**
 * Data models: views listed by reference or defined in place, the limits, the read form.
 */
import { describe, expect, it } from 'vitest';
import { compileBodyValidator } from '../../src/http/validation.js';
import { ApplyDataModelsBody, DataModelRead } from '../../src/resources/models/data-model-schema.js';
import { dataModelReadForm, normalizeDataModels } from '../../src/resources/models/data-models.js';
import { viewReadForm } from '../../src/resources/models/view-resolution.js';
import { containers, expectApiError, MemorySchema, viewRefOf } from '../support/dm-schema.js';

const META = { createdTime: 1, lastUpdatedTime: 2, isGlobal: false };
const validate = compileBodyValidator<{ items: never[] }>(ApplyDataModelsBody);
const models = (...items: unknown[]) => normalizeDataModels(validate(structuredClone({ items })).items);
const model = (views: unknown[], extra: Record<string, unknown> = {}) => ({ space: 'sp', externalId: 'M', version: '1', views, ...extra });
const inline = (externalId: string, properties: Record<string, unknown> = {}) => ({ space: 'sp', externalId, version: 'v1', properties });

describe('data models', () => {
  it('keeps the views in order and sets apart those defined in place', () => {
    const [m] = models(model([viewRefOf('sp', 'A'), inline('B', { p: { container: { type: 'container', space: 'sp', externalId: 'C' }, containerPropertyIdentifier: 'x' } })], { name: 'Model' }));
    expect(m.definition).toEqual({
      space: 'sp',
      externalId: 'M',
      version: '1',
      name: 'Model',
      views: [
        { space: 'sp', externalId: 'A', version: 'v1' },
        { space: 'sp', externalId: 'B', version: 'v1' },
      ],
    });
    expect(m.inlineViews.map((v) => v.externalId)).toEqual(['B']);
    expect(models(model([]))[0].definition.views).toEqual([]);
  });

  it('refuses a view listed twice, too many views, and bad inline views, naming the place', () => {
    expectApiError(() => models(model([viewRefOf('sp', 'A'), inline('A')])), 400, 'items[0].views[1]', 'twice');
    expectApiError(() => models(model(Array.from({ length: 101 }, (_, i) => viewRefOf('sp', `V${i}`)))), 400, 'items[0].views', 'at most 100');
    expectApiError(() => models(model([inline('Boolean')])), 400, 'items[0].views[0].externalId', 'reserved');
    const e = expectApiError(() => models(model([]), model([])), 400, 'more than once');
    expect(e.extras.duplicated).toEqual([{ space: 'sp', externalId: 'M', version: '1' }]);
  });

  it('refuses a view defined differently by two data models of one request', () => {
    expect(models(model([inline('A')]), model([inline('A')], { externalId: 'N' }))).toHaveLength(2);
    expectApiError(() => models(model([inline('A')]), model([inline('A', { p: { type: { space: 'sp', externalId: 't' }, source: viewRefOf('sp', 'A') } })], { externalId: 'N' })), 400, 'items[1].views', 'defined twice');
  });

  it('reads back with references, or with the views inline', () => {
    const [m] = models(model([viewRefOf('sp', 'A'), viewRefOf('sp', 'Gone')], { description: 'd' }));
    const read = dataModelReadForm(m.definition, META);
    expect(read.views).toEqual([viewRefOf('sp', 'A'), viewRefOf('sp', 'Gone')]);
    compileBodyValidator(DataModelRead)(structuredClone(read));
    const schema = new MemorySchema(containers({ space: 'sp', externalId: 'C', properties: { x: { type: { type: 'text' } } } }), [m.inlineViews[0] ?? { space: 'sp', externalId: 'A', version: 'v1', implements: [], properties: {} }]);
    const withViews = dataModelReadForm(m.definition, META, (id) => {
      const v = schema.resolver().view(id);
      return v ? viewReadForm(v, META) : undefined;
    });
    expect(withViews.views).toHaveLength(1);
    expect(withViews.views[0]).toMatchObject({ externalId: 'A', properties: {}, writable: true });
    compileBodyValidator(DataModelRead)(structuredClone(withViews));
  });
});
