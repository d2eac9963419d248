/**
 * A strict JSON syntax check that says where the first error is. The YAML parser reads JSON files too (for
 * positions), but it accepts what JSON does not (trailing commas, comments, single quotes, bare words),
 * and a suite file that only our tools accept would fail in the tools that run it. Nesting is bounded, so
 * the recursion of this check is too.
 */
import { MAX_NESTING, NESTING_MESSAGE } from './nesting.js';

export interface JsonSyntaxError {
  offset: number;
  message: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
const LITERALS = ['true', 'false', 'null'];

class Failure extends Error {
  constructor(readonly offset: number, message: string) {
    super(message);
  }
}

export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let at = 0;
  let depth = 0;
  const fail = (message: string): never => {
    throw new Failure(at, at >= text.length ? `${message}, but the file ends` : `${message}, found ${JSON.stringify(text[at])}`);
  };
  const skipWhitespace = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.test(text);
    at = WHITESPACE.lastIndex;
  };
  const expect = (char: string, what: string) => {
    skipWhitespace();
    if (text[at] !== char) fail(`expected ${what}`);
    at++;
  };
  const string = () => {
    expect('"', 'a string in double quotes');
    for (;;) {
      const char = text[at];
      if (char === undefined) fail('expected the closing quote of a string');
      if (char === '"') break;
      if (char < ' ') fail('expected a character of a string (control characters must be escaped)');
      if (char === '\\') {
        at++;
        if (text[at] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 1, at + 5))) at += 4;
        else if (!'"\\/bfnrt'.includes(text[at] ?? 'x')) {
          fail('expected an escape sequence (\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)');
        }
      }
      at++;
    }
    at++;
  };
  const sequence = (close: string, item: () => void, what: string) => {
    skipWhitespace();
    if (text[at] === close) {
      at++;
      return;
    }
    for (;;) {
      item();
      skipWhitespace();
      if (text[at] === close) break;
      expect(',', `',' or '${close}' after ${what}`);
    }
    at++;
  };
  const value = (): void => {
    skipWhitespace();
    const char = text[at];
    if ((char === '{' || char === '[') && depth === MAX_NESTING) throw new Failure(at, NESTING_MESSAGE);
    if (char === '{') {
      at++;
      depth++;
      sequence('}', () => {
        string();
        expect(':', "':' after a property name");
        value();
      }, 'a property');
      depth--;
    } else if (char === '[') {
      at++;
      depth++;
      sequence(']', value, 'a list item');
      depth--;
    } else if (char === '"') {
      string();
    } else {
      const literal = LITERALS.find((word) => text.startsWith(word, at));
      NUMBER.lastIndex = at;
      if (literal) at += literal.length;
      else if (NUMBER.test(text)) at = NUMBER.lastIndex;
      else fail('expected a value (object, list, string, number, true, false or null)');
    }
  };
  try {
    value();
    skipWhitespace();
    if (at < text.length) fail('expected the end of the file after the value');
    return undefined;
  } catch (err) {
    if (err instanceof Failure) return { offset: err.offset, message: err.message };
    throw err;
  }
}
