/**
 * Every rule of the format broken one at a time, generated from a suite that uses every property at every
 * level (spec-model.ts). Each broken suite must give exactly one diagnostic, at the right place, saying
 * what was expected; each change the spec allows must give none.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatPath, type PathSegment } from '../../src/evals/diagnostics.js';
import { FULL_FRAGMENT, FULL_ROOT, SCORER_TYPES, SHAPES, shapeOf, type ShapeName } from './spec-model.js';
import { diagnosticsOf, Scratch } from './support.js';

type Json = Record<string, unknown>;

interface Mutation {
  name: string;
  change(document: Json): void;
  /** `valid` when the spec allows the change. */
  expected: { path: PathSegment[]; message: string } | 'valid';
}

function valueAt(document: unknown, path: readonly PathSegment[]): Json {
  return path.reduce<unknown>((node, segment) => (node as Json)[segment], document) as Json;
}

function setAt(path: PathSegment[], field: PathSegment, value: unknown) {
  return (document: Json) => {
    valueAt(document, path)[field] = value;
  };
}

const problem = (path: PathSegment[], message: string) => ({ path, message });

function* mutationsOf(value: Json, shapeName: ShapeName, path: PathSegment[]): Generator<Mutation> {
  const shape = SHAPES[shapeName];
  const where = formatPath(path);
  const allowed = Object.keys(shape.fields).join(', ');
  yield {
    name: `${where}: unknown property`,
    change: setAt(path, 'unexpected', 1),
    expected: problem(path, `unknown property "unexpected" (allowed: ${allowed})`),
  };
  if (SCORER_TYPES.includes(shapeName as (typeof SCORER_TYPES)[number])) {
    for (const other of SCORER_TYPES) {
      for (const field of Object.keys(SHAPES[other].fields).filter((name) => !(name in shape.fields))) {
        yield {
          name: `${where}: ${shapeName} scorer with ${other}'s ${field}`,
          change: setAt(path, field, field === 'tools' ? [] : 'text'),
          expected: problem(path, `unknown property "${field}" (allowed: ${allowed})`),
        };
      }
    }
  }
  for (const field of shape.required) {
    yield {
      name: `${where}: without required ${field}`,
      change: (document) => delete valueAt(document, path)[field],
      expected: problem(path, `missing required property "${field}"`),
    };
  }
  for (const [field, rule] of Object.entries(shape.fields)) {
    if (!(field in value)) continue;
    const at = [...path, field];
    const name = formatPath(at);
    switch (rule.kind) {
      case 'text':
        yield { name: `${name}: empty`, change: setAt(path, field, ''), expected: problem(at, 'expected at least 1 character, got an empty string') };
        yield { name: `${name}: a number`, change: setAt(path, field, 7), expected: problem(at, 'expected a string, got number 7') };
        break;
      case 'boolean':
        yield { name: `${name}: a string`, change: setAt(path, field, 'yes'), expected: problem(at, 'expected true or false, got the string "yes"') };
        break;
      case 'scorerType':
        yield {
          name: `${name}: unknown`,
          change: setAt(path, field, 'relevance'),
          expected: problem(at, 'unknown value "relevance" (expected one of: correctness, faithfulness, toolSelection, toolInvocation)'),
        };
        break;
      case 'texts':
      case 'objects': {
        yield { name: `${name}: a mapping`, change: setAt(path, field, { a: 1 }), expected: problem(at, 'expected a list (array), got a mapping') };
        yield {
          name: `${name}: empty list`,
          change: setAt(path, field, []),
          expected: rule.minItems === 1 ? problem(at, 'expected at least 1 item, got an empty list') : 'valid',
        };
        const items = value[field] as unknown[];
        if (rule.kind === 'texts') {
          yield { name: `${name}[0]: empty`, change: setAt(at, 0, ''), expected: problem([...at, 0], 'expected at least 1 character, got an empty string') };
          break;
        }
        yield {
          name: `${name}[0]: a string`,
          change: setAt(at, 0, 'text'),
          expected: problem([...at, 0], 'expected a mapping (object), got the string "text"'),
        };
        for (let index = 0; index < items.length; index++) {
          yield* mutationsOf(items[index] as Json, shapeOf(items[index], rule.of), [...at, index]);
        }
      }
    }
  }
}

const CONTEXTS = [
  { name: 'in the root file', file: 'suite.yaml', document: FULL_ROOT, others: {} },
  { name: 'in an included file', file: 'fragment.yaml', document: FULL_FRAGMENT, others: { 'suite.yaml': { include: ['fragment.yaml'] } } },
];

const scratch = new Scratch();
afterAll(() => scratch.dispose());

describe.each(CONTEXTS)('a suite broken $name', ({ file, document, others }) => {
  const write = (contents: unknown) => scratch.write({ ...others, 'leaf.yaml': '{}\n', [file]: contents });

  it('is valid before it is broken', () => {
    expect(diagnosticsOf(write(document))).toEqual([]);
  });

  const mutations = [...mutationsOf(document as Json, 'file', [])];
  it.each(mutations.map((mutation) => [mutation.name, mutation] as const))('%s', (_name, mutation) => {
    const broken = structuredClone(document) as Json;
    mutation.change(broken);
    const diagnostics = diagnosticsOf(write(broken));
    if (mutation.expected === 'valid') {
      expect(diagnostics).toEqual([]);
      return;
    }
    expect(diagnostics.map(({ file, path, message }) => ({ file, path, message }))).toEqual([{ file, ...mutation.expected }]);
    expect(diagnostics[0].position?.line).toBeGreaterThan(0);
  });
});

describe('positions', () => {
  it('point at the unknown key itself', () => {
    const broken = structuredClone(FULL_FRAGMENT) as Json;
    setAt(['cases', 0, 'turns', 0, 'scorers', 1], 'unexpected', 1)(broken);
    const directory = scratch.write({ 'suite.yaml': { include: ['fragment.yaml'] }, 'leaf.yaml': '{}\n', 'fragment.yaml': broken });
    const [diagnostic] = diagnosticsOf(directory);
    const { line, column } = diagnostic.position!;
    const lines = readFileSync(join(directory, 'fragment.yaml'), 'utf8').split('\n');
    expect(lines[line - 1].slice(column - 1)).toMatch(/^unexpected: 1/);
  });
});
