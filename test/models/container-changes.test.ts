/**
 * Applying a container that exists: what may change, what is refused (409 naming the place), what is kept
 * when left out, and what the storage layer is told to do.
 */
import { describe, expect, it } from 'vitest';
import { compileBodyValidator } from '../../src/http/validation.js';
import { planContainerUpdate } from '../../src/resources/models/container-changes.js';
import { ContainerCreate } from '../../src/resources/models/container-schema.js';
import { normalizeContainer, type ContainerDefinition } from '../../src/resources/models/containers.js';
import { containers, expectApiError } from '../support/dm-schema.js';

const validate = compileBodyValidator<never>(ContainerCreate);

const BASE = {
  space: 'sp',
  externalId: 'Pump',
  name: 'Pump',
  properties: {
    label: { type: { type: 'text', collation: 'en' } },
    tags: { type: { type: 'text', list: true, maxListSize: 10 } },
    size: { type: { type: 'int32' }, nullable: false },
    at: { type: { type: 'direct', container: { type: 'container', space: 'sp', externalId: 'Site' } } },
    state: { type: { type: 'enum', values: { on: {}, off: {} } } },
    temp: { type: { type: 'float64', unit: { externalId: 'temperature:deg_c' } } },
    note: { type: { type: 'text', maxTextSize: 100 } },
    n: { type: { type: 'int64' }, autoIncrement: true },
  },
  constraints: { unique: { properties: ['label'] } },
  indexes: { byLabel: { properties: ['label'] } },
};

const stored: ContainerDefinition = containers(BASE)[0];

/** The plan of applying `changes` merged over the stored definition's request form. */
function plan(changes: (raw: typeof BASE) => unknown) {
  const raw = changes(structuredClone(BASE));
  return planContainerUpdate(stored, normalizeContainer(validate(raw), ['items', 0], stored), ['items', 0]);
}

describe('container updates', () => {
  it('changes nothing when the same definition is applied again', () => {
    const p = plan((r) => r);
    expect(p.changed).toBe(false);
    expect(p.definition).toEqual(stored);
    expect(p).toMatchObject({ addedProperties: [], addedIndexes: [], addedConstraints: [], revalidate: [] });
  });

  it('keeps properties, indexes and constraints that are left out', () => {
    const p = plan((r) => ({ ...r, properties: { label: r.properties.label }, constraints: {}, indexes: {} }));
    expect(p.changed).toBe(false);
    expect(p.definition).toEqual(stored);
  });

  it('takes new names, descriptions, defaults and properties', () => {
    const p = plan((r) => {
      r.name = 'Pumps';
      (r.properties.label as Record<string, unknown>).description = 'the label';
      (r.properties.label as Record<string, unknown>).defaultValue = 'x';
      (r.properties as Record<string, unknown>).extra = { type: { type: 'boolean' } };
      return r;
    });
    expect(p.changed).toBe(true);
    expect(p.addedProperties).toEqual(['extra']);
    expect(p.definition.name).toBe('Pumps');
    expect(p.definition.properties.label).toMatchObject({ description: 'the label', defaultValue: 'x' });
  });

  it('lets a property become required, and asks for its data to be checked', () => {
    const p = plan((r) => {
      (r.properties.label as Record<string, unknown>).nullable = false;
      return r;
    });
    expect(p.revalidate).toEqual([{ property: 'label', bound: 'nullability' }]);
    expectApiError(() => plan((r) => ({ ...r, properties: { ...r.properties, size: { type: { type: 'int32' }, nullable: true } } })), 409, 'items[0].properties.size.nullable', 'cannot become nullable');
  });

  it('lets size bounds appear or grow, never shrink or go', () => {
    const grow = plan((r) => ({ ...r, properties: { ...r.properties, tags: { type: { type: 'text', list: true, maxListSize: 20 } }, note: { type: { type: 'text', maxTextSize: 200 } } } }));
    expect(grow.revalidate).toEqual([]);
    expect(grow.definition.properties.tags.type).toMatchObject({ maxListSize: 20 });
    const appear = plan((r) => ({ ...r, properties: { ...r.properties, label: { type: { type: 'text', collation: 'en', maxTextSize: 50 } } } }));
    expect(appear.revalidate).toEqual([{ property: 'label', bound: 'maxTextSize' }]);
    expectApiError(() => plan((r) => ({ ...r, properties: { ...r.properties, tags: { type: { type: 'text', list: true, maxListSize: 5 } } } })), 409, 'items[0].properties.tags.type.maxListSize', 'only grow');
    expectApiError(() => plan((r) => ({ ...r, properties: { ...r.properties, tags: { type: { type: 'text', list: true } } } })), 409, 'tags.type.maxListSize', 'cannot be removed');
    expectApiError(() => plan((r) => ({ ...r, properties: { ...r.properties, note: { type: { type: 'text', maxTextSize: 50 } } } })), 409, 'note.type.maxTextSize');
  });

  it('refuses changes to what stored values are', () => {
    const refuse = (property: string, def: unknown, ...parts: string[]) =>
      expectApiError(() => plan((r) => ({ ...r, properties: { ...r.properties, [property]: def } })), 409, `items[0].properties.${property}`, ...parts);
    refuse('size', { type: { type: 'int64' }, nullable: false }, 'type', 'stored int32, given int64');
    refuse('note', { type: { type: 'text', list: true } }, 'type', 'list of text');
    refuse('label', { type: { type: 'text', collation: 'de' } }, 'collation');
    refuse('at', { type: { type: 'direct' } }, 'target container');
    refuse('temp', { type: { type: 'float64', unit: { externalId: 'temperature:deg_f' } } }, 'unit');
    refuse('state', { type: { type: 'enum', values: { on: {} } } }, 'values', '"off"');
    refuse('n', { type: { type: 'int64' } }, 'autoIncrement');
  });

  it('lets enums gain values', () => {
    const p = plan((r) => ({ ...r, properties: { ...r.properties, state: { type: { type: 'enum', values: { on: {}, off: {}, broken: {} }, unknownValue: 'broken' } } } }));
    expect(Object.keys((p.definition.properties.state.type as { values: object }).values)).toEqual(['on', 'off', 'broken']);
  });

  it('refuses another usedFor', () => {
    expectApiError(() => plan((r) => ({ ...r, usedFor: 'edge' })), 409, 'items[0].usedFor');
  });

  it('adds indexes and constraints, and changes none that exist', () => {
    const p = plan((r) => ({
      ...r,
      indexes: { ...r.indexes, bySize: { properties: ['size'], cursorable: true } },
      constraints: { ...r.constraints, needsSite: { require: { type: 'container', space: 'sp', externalId: 'Site' } }, another: { properties: ['size'] } },
    }));
    expect(p.addedIndexes).toEqual(['bySize']);
    expect(p.addedConstraints).toEqual(['needsSite', 'another']);
    expectApiError(() => plan((r) => ({ ...r, constraints: { unique: { properties: ['label', 'size'] } } })), 409, 'items[0].constraints.unique', 'cannot change');
    expectApiError(() => plan((r) => ({ ...r, indexes: { byLabel: { properties: ['label'], cursorable: true } } })), 409, 'items[0].indexes.byLabel');
  });

  it('refuses more indexes or constraints than a container may hold, counting those stored', () => {
    const indexes = (from: number) => Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`x${from + i}`, { properties: ['size'] }]));
    // Stored with one index, then five more, then five more again.
    const five = plan((r) => ({ ...r, indexes: indexes(0) }));
    expect(five.addedIndexes).toHaveLength(5);
    const grown = normalizeContainer(validate({ ...BASE, indexes: indexes(5) }), ['items', 0], five.definition);
    expectApiError(() => planContainerUpdate(five.definition, grown, ['items', 0]), 400, 'items[0].indexes', 'at most 10 indexes, got 11');
  });

  it('lets new indexes name stored properties the request leaves out', () => {
    const p = plan((r) => ({ ...r, properties: { label: r.properties.label }, indexes: { bySize: { properties: ['size'] } } }));
    expect(p.addedIndexes).toEqual(['bySize']);
  });

  it('refuses a list grown past what its btree index holds', () => {
    const ints = containers({ space: 'sp', externalId: 'I', properties: { l: { type: { type: 'int32', list: true, maxListSize: 500 } } }, indexes: { i: { properties: ['l'] } } })[0];
    const next = normalizeContainer(validate({ space: 'sp', externalId: 'I', properties: { l: { type: { type: 'int32', list: true, maxListSize: 700 } } } }), ['items', 0], ints);
    expectApiError(() => planContainerUpdate(ints, next, ['items', 0]), 400, 'items[0].indexes.i.properties[0]', 'at most 600');
  });
});
