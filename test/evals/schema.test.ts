/**
 * The shipped JSON Schema: a valid draft-07 document that the validator loads, and usable by tools that
 * ignore Ajv's `discriminator` keyword (editors fall back to its `oneOf`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type AnySchemaObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { checkSuiteDocument, SUITE_SCHEMA_URL } from '../../src/evals/suite-schema.js';
import { FULL_FRAGMENT } from './spec-model.js';

const shippedPath = fileURLToPath(new URL('../../schemas/eval-suite.schema.json', import.meta.url));
const schema = JSON.parse(readFileSync(shippedPath, 'utf8')) as AnySchemaObject;

describe('schemas/eval-suite.schema.json', () => {
  it('is the file the validator loads', () => {
    expect(fileURLToPath(SUITE_SCHEMA_URL)).toBe(shippedPath);
    expect(existsSync(shippedPath)).toBe(true);
  });

  it('is a valid draft-07 schema', () => {
    const ajv = new Ajv({ discriminator: true });
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
  });

  it('accepts a suite using every property, and needs no discriminator support to reject a wrong scorer', () => {
    const plain = new Ajv({ strict: false, allErrors: true }).compile(schema);
    expect(plain(FULL_FRAGMENT), JSON.stringify(plain.errors)).toBe(true);
    const mixed = structuredClone(FULL_FRAGMENT) as { cases: { turns: { scorers: object[] }[] }[] };
    mixed.cases[0].turns[0].scorers[0] = { type: 'correctness', criteria: 'Good.', groundTruth: 'Facts.' };
    expect(plain(mixed)).toBe(false);
  });

  it('drives the validator: one clear message for a scorer of the wrong shape', () => {
    const mixed = structuredClone(FULL_FRAGMENT) as { cases: { turns: { scorers: object[] }[] }[] };
    mixed.cases[0].turns[0].scorers[0] = { type: 'correctness', criteria: 'Good.', groundTruth: 'Facts.' };
    expect(checkSuiteDocument(mixed)).toEqual([
      {
        path: ['cases', 0, 'turns', 0, 'scorers', 0],
        key: 'groundTruth',
        message: 'unknown property "groundTruth" (allowed: type, criteria)',
      },
    ]);
  });

  it('names the scorer types when type is not a string', () => {
    const typed = structuredClone(FULL_FRAGMENT) as { cases: { turns: { scorers: object[] }[] }[] };
    typed.cases[0].turns[0].scorers[0] = { type: 3 };
    expect(checkSuiteDocument(typed)).toEqual([
      {
        path: ['cases', 0, 'turns', 0, 'scorers', 0, 'type'],
        message: 'expected one of: correctness, faithfulness, toolSelection, toolInvocation, got number 3',
      },
    ]);
  });
});
