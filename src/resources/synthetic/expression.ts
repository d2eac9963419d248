/**
 * The expression language of synthetic time series, parsed by a small recursive-descent grammar into a
 * tree; nothing is ever evaluated as code. Every refusal is a 400 naming the position (from 1) in the text:
 * `items[0].expression at position 12: expected ")" or an operator, found ","`.
 *
 *   expression := term (("+" | "-") term)*
 *   term       := unary (("*" | "/") unary)*
 *   unary      := ("-" | "+") unary | primary
 *   primary    := number | series | call | "(" expression ")"
 *   series     := ("ts" | "TS") "{" parameter ("," parameter)* "}"
 *   parameter  := name ("=" | ":") (string | number)
 *   call       := name "(" [expression ("," expression)*] ")"      map's 2nd and 3rd arguments are lists:
 *   list       := "[" [(string | number) ("," (string | number))*] "]"
 *
 * Strings are in single or double quotes (a backslash escapes the next character); names of functions are
 * read in any letter case.
 */
import { badRequest } from '../../http/errors.js';
import type { InstanceId, Ref } from '../../query/refs.js';

export const EXPRESSION_LIMITS = {
  /** Characters of one expression. */
  length: 10_000,
  /** Time series references in one expression. */
  references: 100,
  /** Parentheses and calls nested in one another. */
  depth: 100,
  /** Operators and function calls in one expression: what computing each point takes. */
  operations: 1000,
} as const;

/** A time series the expression reads, and how: raw points, or an aggregate; in its own unit, or another. */
export interface SeriesInput {
  ref: Ref;
  aggregate?: string;
  granularity?: string;
  /** Where aggregate buckets start, in milliseconds from the epoch (modulo the granularity). */
  alignment?: number;
  targetUnit?: string;
  targetUnitSystem?: string;
  /** Position (from 1) of the reference, for messages. */
  at: number;
}

export type Node =
  | { kind: 'number'; value: number }
  | { kind: 'series'; input: number }
  | { kind: 'negate'; arg: Node }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; left: Node; right: Node }
  | { kind: 'call'; name: FunctionName; args: Node[] }
  | { kind: 'map'; arg: Node; from: Array<string | number>; to: number[]; fallback: Node };

/** The functions and the number of arguments each takes (`Infinity`: one or more). */
export const FUNCTIONS = {
  sin: [1, 1],
  cos: [1, 1],
  pi: [0, 0],
  ln: [1, 1],
  sqrt: [1, 1],
  exp: [1, 1],
  abs: [1, 1],
  pow: [2, 2],
  round: [2, 2],
  on_error: [2, 2],
  max: [1, Infinity],
  min: [1, Infinity],
  avg: [1, Infinity],
  sum: [1, Infinity],
  map: [4, 4],
} as const;
export type FunctionName = keyof typeof FUNCTIONS;

const PARAMETERS = ['id', 'externalId', 'space', 'aggregate', 'granularity', 'alignment', 'targetUnit', 'targetUnitSystem'] as const;
type Parameter = (typeof PARAMETERS)[number];

interface Token {
  type: 'number' | 'string' | 'name' | 'punct' | 'end';
  /** The number, the string's content, the name or the punctuation mark. */
  value: string | number;
  /** Where it starts in the text (from 0). */
  at: number;
  text: string;
}

const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const PUNCT = '+-*/(),{}[]=:';

class ExpressionParser {
  private tokens: Token[] = [];
  private i = 0;
  private depth = 0;
  private operations = 0;
  readonly inputs: SeriesInput[] = [];

  constructor(
    private readonly text: string,
    /** Names the expression in messages (`items[0].expression`). */
    private readonly where: string,
  ) {}

  private fail(at: number, message: string): never {
    throw badRequest(`${this.where} at position ${at + 1}: ${message}`);
  }

  private tokenize(): void {
    const s = this.text;
    let at = 0;
    while (at < s.length) {
      const c = s[at];
      if (/\s/.test(c)) {
        at++;
        continue;
      }
      NUMBER.lastIndex = at;
      NAME.lastIndex = at;
      let m: RegExpExecArray | null;
      if ((m = NUMBER.exec(s))) {
        this.tokens.push({ type: 'number', value: Number(m[0]), at, text: m[0] });
        at += m[0].length;
      } else if ((m = NAME.exec(s))) {
        this.tokens.push({ type: 'name', value: m[0], at, text: m[0] });
        at += m[0].length;
      } else if (c === "'" || c === '"') {
        let value = '';
        let k = at + 1;
        for (; k < s.length && s[k] !== c; k++) value += s[k] === '\\' && k + 1 < s.length ? s[++k] : s[k];
        if (k >= s.length) this.fail(at, 'a string is not closed');
        this.tokens.push({ type: 'string', value, at, text: s.slice(at, k + 1) });
        at = k + 1;
      } else if (PUNCT.includes(c)) {
        this.tokens.push({ type: 'punct', value: c, at, text: c });
        at++;
      } else {
        this.fail(at, `unexpected character ${JSON.stringify(c)}`);
      }
    }
    this.tokens.push({ type: 'end', value: '', at: s.length, text: '' });
  }

  private peek(): Token {
    return this.tokens[this.i];
  }

  private next(): Token {
    return this.tokens[this.i++];
  }

  private describe(t: Token): string {
    return t.type === 'end' ? 'the end of the expression' : JSON.stringify(t.text.length > 30 ? `${t.text.slice(0, 30)}...` : t.text);
  }

  private isPunct(value: string): boolean {
    const t = this.peek();
    return t.type === 'punct' && t.value === value;
  }

  private expect(value: string, what = `"${value}"`): Token {
    const t = this.next();
    if (t.type !== 'punct' || t.value !== value) this.fail(t.at, `expected ${what}, found ${this.describe(t)}`);
    return t;
  }

  parse(): Node {
    if (this.text.length > EXPRESSION_LIMITS.length) {
      throw badRequest(`${this.where}: the expression has ${this.text.length} characters; at most ${EXPRESSION_LIMITS.length} are allowed`);
    }
    this.tokenize();
    const root = this.expression();
    const rest = this.peek();
    if (rest.type !== 'end') this.fail(rest.at, `expected an operator or the end of the expression, found ${this.describe(rest)}`);
    return root;
  }

  /** Counts an operation (an operator or a call) at `at`, refusing one past the limit. */
  private operation(at: number): void {
    if (++this.operations > EXPRESSION_LIMITS.operations) this.fail(at, `an expression has at most ${EXPRESSION_LIMITS.operations} operators and function calls`);
  }

  private nested<T>(at: number, fn: () => T): T {
    if (++this.depth > EXPRESSION_LIMITS.depth) this.fail(at, `the expression is nested more than ${EXPRESSION_LIMITS.depth} deep`);
    const out = fn();
    this.depth--;
    return out;
  }

  private expression(): Node {
    return this.leftToRight(['+', '-'], () => this.term());
  }

  private term(): Node {
    return this.leftToRight(['*', '/'], () => this.unary());
  }

  /** Operands joined by operators of one precedence, grouped from the left. */
  private leftToRight(ops: ReadonlyArray<'+' | '-' | '*' | '/'>, operand: () => Node): Node {
    let left = operand();
    while (ops.some((op) => this.isPunct(op))) {
      const t = this.next();
      this.operation(t.at);
      const op = t.value as '+' | '-' | '*' | '/';
      left = { kind: 'binary', op, left, right: operand() };
    }
    return left;
  }

  private unary(): Node {
    if (this.isPunct('-') || this.isPunct('+')) {
      const t = this.next();
      this.operation(t.at);
      const arg = this.nested(t.at, () => this.unary());
      return t.value === '-' ? { kind: 'negate', arg } : arg;
    }
    return this.primary();
  }

  private primary(): Node {
    const t = this.next();
    if (t.type === 'number') return { kind: 'number', value: t.value as number };
    if (t.type === 'punct' && t.value === '(') {
      const inner = this.nested(t.at, () => this.expression());
      this.expect(')', '")" or an operator');
      return inner;
    }
    if (t.type === 'name') {
      if ((t.value as string).toLowerCase() === 'ts' && this.isPunct('{')) return this.series(t);
      return this.call(t);
    }
    return this.fail(t.at, `expected a number, a time series, a function or "(", found ${this.describe(t)}`);
  }

  private series(start: Token): Node {
    this.expect('{');
    const given = new Map<Parameter, { value: string | number; at: number }>();
    do {
      const name = this.next();
      if (name.type !== 'name') this.fail(name.at, `expected a parameter name, found ${this.describe(name)}`);
      if (!(PARAMETERS as readonly unknown[]).includes(name.value)) this.fail(name.at, `unknown parameter ${JSON.stringify(name.value)} (known: ${PARAMETERS.join(', ')})`);
      const key = name.value as Parameter;
      if (given.has(key)) this.fail(name.at, `the parameter ${key} is given twice`);
      const sep = this.next();
      if (sep.type !== 'punct' || (sep.value !== '=' && sep.value !== ':')) this.fail(sep.at, `expected "=" or ":" after ${key}, found ${this.describe(sep)}`);
      const value = this.next();
      const numeric = key === 'id' || key === 'alignment';
      if (numeric ? value.type !== 'number' : value.type !== 'string') {
        this.fail(value.at, `${key} takes ${numeric ? 'a number' : 'a quoted string'}, found ${this.describe(value)}`);
      }
      if (numeric && !Number.isSafeInteger(value.value)) this.fail(value.at, `${key} takes a whole number, found ${this.describe(value)}`);
      given.set(key, { value: value.value, at: value.at });
    } while (this.isPunct(',') && this.next());
    this.expect('}', '"," or "}"');
    const get = (k: Parameter) => given.get(k)?.value;
    const externalId = get('externalId') as string | undefined;
    const space = get('space') as string | undefined;
    let ref: Ref;
    if (given.has('id') && (externalId !== undefined || space !== undefined)) this.fail(start.at, 'a time series is named by id, by externalId, or by space and externalId; give one of them');
    if (given.has('id')) ref = { id: get('id') as number };
    else if (space !== undefined && externalId !== undefined) ref = { instanceId: { space, externalId } satisfies InstanceId };
    else if (space !== undefined) this.fail(start.at, 'a time series named by space needs its externalId too');
    else if (externalId !== undefined) ref = { externalId };
    else return this.fail(start.at, 'name the time series: id, externalId, or space and externalId');
    if (given.has('aggregate') !== given.has('granularity')) this.fail(start.at, 'aggregate and granularity go together; give both, or neither');
    if (given.has('alignment') && !given.has('aggregate')) this.fail(given.get('alignment')!.at, 'alignment applies to aggregates; give aggregate and granularity too');
    if (given.has('targetUnit') && given.has('targetUnitSystem')) this.fail(given.get('targetUnitSystem')!.at, 'give targetUnit or targetUnitSystem, not both');
    if (this.inputs.length >= EXPRESSION_LIMITS.references) this.fail(start.at, `an expression refers to at most ${EXPRESSION_LIMITS.references} time series`);
    const input: SeriesInput = { ref: ref!, at: start.at + 1 };
    for (const k of ['aggregate', 'granularity', 'targetUnit', 'targetUnitSystem'] as const) if (given.has(k)) input[k] = get(k) as string;
    if (given.has('alignment')) input.alignment = get('alignment') as number;
    this.inputs.push(input);
    return { kind: 'series', input: this.inputs.length - 1 };
  }

  private call(name: Token): Node {
    const lower = (name.value as string).toLowerCase();
    if (!Object.hasOwn(FUNCTIONS, lower)) this.fail(name.at, `unknown function ${JSON.stringify(name.value)} (functions: ${Object.keys(FUNCTIONS).join(', ')}, and ts{...} for a time series)`);
    const fn = lower as FunctionName;
    this.operation(name.at);
    const open = this.expect('(', `"(" after ${fn}`);
    return this.nested(open.at, () => {
      if (fn === 'map') return this.mapCall();
      const args: Node[] = [];
      if (!this.isPunct(')')) {
        do args.push(this.expression());
        while (this.isPunct(',') && this.next());
      }
      const close = this.expect(')', '"," or ")"');
      const [min, max] = FUNCTIONS[fn];
      if (args.length < min || args.length > max) {
        const wanted = min === max ? `${min}` : `at least ${min}`;
        this.fail(close.at, `${fn} takes ${wanted} argument${min === 1 && max === 1 ? '' : 's'}, got ${args.length}`);
      }
      if (fn === 'round' && args[1].kind === 'number' && !(Number.isInteger(args[1].value) && Math.abs(args[1].value) < 10)) {
        this.fail(close.at, `round takes a whole number of decimals greater than -10 and less than 10, got ${args[1].value}`);
      }
      return { kind: 'call', name: fn, args };
    });
  }

  private list(what: string): Array<string | number> {
    this.expect('[', `a list in [...] of ${what}`);
    const out: Array<string | number> = [];
    if (!this.isPunct(']')) {
      do {
        const t = this.next();
        if (t.type !== 'string' && t.type !== 'number') this.fail(t.at, `expected ${what}, found ${this.describe(t)}`);
        out.push(t.value);
      } while (this.isPunct(',') && this.next());
    }
    this.expect(']', '"," or "]"');
    return out;
  }

  private mapCall(): Node {
    const arg = this.expression();
    this.expect(',', '"," after the first argument of map');
    const fromAt = this.peek().at;
    const from = this.list('strings or numbers to map from');
    this.expect(',', '"," after the list to map from');
    const toAt = this.peek().at;
    const to = this.list('numbers to map to');
    if (to.some((v) => typeof v !== 'number')) this.fail(toAt, 'map maps to numbers; the second list holds a string');
    if (to.length !== from.length) this.fail(fromAt, `map takes two lists of the same length, got ${from.length} and ${to.length} values`);
    this.expect(',', '"," before the default value of map');
    const fallback = this.expression();
    this.expect(')', '")": map takes 4 arguments, a value, a list to map from, a list to map to and a default');
    return { kind: 'map', arg, from, to: to as number[], fallback };
  }
}

/** Parses an expression; `where` names it in messages. */
export function parseExpression(text: string, where: string): { root: Node; inputs: SeriesInput[] } {
  const parser = new ExpressionParser(text, where);
  const root = parser.parse();
  return { root, inputs: parser.inputs };
}
