/** The strict JSON check agrees with JSON.parse, and says where the first error is. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findJsonSyntaxError } from '../../src/evals/json-syntax.js';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('findJsonSyntaxError', () => {
  it('accepts whatever JSON.stringify writes', () => {
    fc.assert(fc.property(fc.json(), (text) => findJsonSyntaxError(text) === undefined));
  });

  it('accepts and refuses exactly what JSON.parse does', () => {
    const jsonish = fc.string({ unit: fc.constantFrom(...'{}[]":,0123456789.eE+- \n\tabcfilnrstu\\/\''), maxLength: 24 });
    const nearlyJson = fc.json().chain((text) =>
      fc.tuple(fc.nat(text.length), fc.constantFrom(',', ']', '}', '"', ' ', "'", '', 'x')).map(([at, insert]) => text.slice(0, at) + insert + text.slice(at)),
    );
    fc.assert(fc.property(fc.oneof(jsonish, nearlyJson), (text) => (findJsonSyntaxError(text) === undefined) === parses(text)), { numRuns: 2000 });
  });

  it.each([
    ['{"a": [1,]}', 9, 'expected a value (object, list, string, number, true, false or null), found "]"'],
    ['{"a": 1,}', 8, 'expected a string in double quotes, found "}"'],
    ['{"a" 1}', 5, `expected ':' after a property name, found "1"`],
    ['{"a": 1', 7, "expected ',' or '}' after a property, but the file ends"],
    ['[1] // note', 4, 'expected the end of the file after the value, found "/"'],
    ['{"a": "\\q"}', 8, 'expected an escape sequence (\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX), found "q"'],
  ])('%j fails at offset %i', (text, offset, message) => {
    expect(findJsonSyntaxError(text)).toEqual({ offset, message });
  });
});
