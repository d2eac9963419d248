/**
 * The Cognite mapping language (the language of hosted extractor mappings, "Kuiper"): a pure, JavaScript-like
 * expression that builds one JSON value from another. `compileMapping` parses an expression and checks its
 * names (variables, functions, how many arguments each takes) up front, so a bad mapping is refused when it
 * is created; `run` evaluates it against an `input`. Evaluation is bounded: every step and every value built
 * spends from a budget, so no expression (the language has no recursion, but nesting `map`s or doubling a
 * string in a `reduce` grows fast) can hold the server for long or fill its memory.
 *
 * Interpreted directly: no eval, no Function, no regular expressions built from user text.
 */

export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };

/** A parse, name or evaluation error, with the line and column (1-based) of the expression it is about. */
export class MappingError extends Error {
  constructor(
    message: string,
    readonly located = true,
  ) {
    super(message);
  }
}

const MAPPING_LIMITS = {
  /**
   * Units of work one evaluation may spend: a unit per step, per element or character built, per node walked.
   * A million is about a tenth of a second of one core; records are sent one after the other, awaiting the
   * gateway between them, so a request of runaway records never holds the process for longer than that at once.
   */
  work: 1_000_000,
  /** Characters of one string built. */
  string: 1_000_000,
  /** Elements of one array, or keys of one object, built. */
  items: 100_000,
  /** Characters of the result, as JSON. */
  output: 1_000_000,
  /** Nesting of the expression's syntax. */
  depth: 100,
  /** Nesting of a value compared, serialised or made. */
  valueDepth: 1000,
} as const;

// ---------------------------------------------------------------------------------------------- tokens

type TokenKind = 'num' | 'str' | 'id' | 'sym' | 'eof';
interface Token {
  kind: TokenKind;
  text: string;
  value?: number | string;
  at: number;
}

const SYMBOLS = ['...', '=>', '==', '!=', '>=', '<=', '&&', '||', '.', ',', '(', ')', '[', ']', '{', '}', ':', '+', '-', '*', '/', '%', '>', '<', '!'];
const IDENT = /[\p{ID_Start}_][\p{ID_Continue}]*/uy;
const NUMBER = /\d+(\.\d+)?([eE][+-]?\d+)?/y;

function position(source: string, at: number): string {
  const before = source.slice(0, at).split('\n');
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const fail = (message: string, at: number): never => {
    throw new MappingError(`${position(source, at)}: ${message}`);
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (source.startsWith('//', i)) {
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end;
      continue;
    }
    if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      if (end < 0) fail('a comment is not closed (*/)', i);
      i = end + 2;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      let text = '';
      let j = i + 1;
      for (; j < source.length && source[j] !== c; j++) {
        if (source[j] !== '\\') {
          text += source[j];
          continue;
        }
        const e = source[++j];
        if (e === 'n') text += '\n';
        else if (e === 't') text += '\t';
        else if (e === '\\' || e === c) text += e;
        else fail(`unknown escape \\${e ?? ''} in a string`, j - 1);
      }
      if (j >= source.length) fail('a string is not closed', i);
      tokens.push(c === '`' ? { kind: 'id', text, at: i } : { kind: 'str', text, value: text, at: i });
      i = j + 1;
      continue;
    }
    NUMBER.lastIndex = i;
    const num = NUMBER.exec(source);
    if (num) {
      if (!Number.isFinite(Number(num[0]))) fail(`the number ${num[0]} is too large`, i);
      tokens.push({ kind: 'num', text: num[0], value: Number(num[0]), at: i });
      i += num[0].length;
      continue;
    }
    IDENT.lastIndex = i;
    const id = IDENT.exec(source);
    if (id) {
      tokens.push({ kind: 'id', text: id[0], at: i });
      i += id[0].length;
      continue;
    }
    const sym = SYMBOLS.find((s) => source.startsWith(s, i));
    if (!sym) fail(`unexpected character ${JSON.stringify(c)}`, i);
    tokens.push({ kind: 'sym', text: sym!, at: i });
    i += sym!.length;
  }
  tokens.push({ kind: 'eof', text: 'the end of the expression', at: source.length });
  return tokens;
}

// ---------------------------------------------------------------------------------------------- syntax

interface Lambda {
  kind: 'lambda';
  params: string[];
  body: Node;
  at: number;
}
type Arg = Node | Lambda;
type Node =
  | { kind: 'lit'; value: Value; at: number }
  | { kind: 'var'; name: string; at: number }
  | { kind: 'array'; items: Array<{ spread: boolean; node: Node }>; at: number }
  | { kind: 'object'; items: Array<{ spread: true; node: Node } | { spread: false; key: Node; value: Node }>; at: number }
  | { kind: 'select'; target: Node; key: Node; at: number }
  | { kind: 'call'; name: string; args: Arg[]; at: number }
  | { kind: 'binary'; op: string; left: Node; right: Node; at: number }
  | { kind: 'unary'; op: string; operand: Node; at: number }
  | { kind: 'is'; operand: Node; type: string; not: boolean; at: number }
  | { kind: 'if'; branches: Array<[Node, Node]>; otherwise?: Node; at: number };

const TYPES = new Set(['null', 'int', 'float', 'number', 'string', 'bool', 'array', 'object']);
const KEYWORDS = new Set(['true', 'false', 'null', 'if', 'else', 'is', 'not']);
/** Binary operators by precedence, loosest first (as C++ orders them). */
const TIERS = [['||'], ['&&'], ['==', '!='], ['<', '>', '<=', '>=', 'is'], ['+', '-'], ['*', '/', '%']];

class Parser {
  private i = 0;
  private depth = 0;
  private scopes: string[][] = [['input']];

  constructor(
    private readonly source: string,
    private readonly tokens: Token[],
  ) {}

  fail(message: string, at: number): never {
    throw new MappingError(`${position(this.source, at)}: ${message}`);
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)];
  }
  private is(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return (t.kind === 'sym' || t.kind === 'id') && t.text === text;
  }
  private next(): Token {
    return this.tokens[this.i++];
  }
  private expect(text: string): Token {
    const t = this.peek();
    if (!this.is(text)) this.fail(`expected ${JSON.stringify(text)}, found ${describe(t)}`, t.at);
    return this.next();
  }

  /** The comma between items, where the closing `close` could also come. */
  private separator(close: string): void {
    const t = this.peek();
    if (!this.is(',')) this.fail(`expected "," or ${JSON.stringify(close)}, found ${describe(t)}`, t.at);
    this.next();
  }

  program(): Node {
    const node = this.expression();
    const t = this.peek();
    if (t.kind !== 'eof') this.fail(`expected the end of the expression, found ${describe(t)}`, t.at);
    return node;
  }

  private expression(tier = 0): Node {
    if (tier === TIERS.length) return this.unary();
    let left = this.expression(tier + 1);
    for (;;) {
      const t = this.peek();
      if (!(t.kind === 'sym' || t.kind === 'id') || !TIERS[tier].includes(t.text)) return left;
      this.next();
      if (t.text === 'is') {
        const not = this.is('not') && !!this.next();
        const type = this.next();
        const name = type.kind === 'str' || type.kind === 'id' ? type.text : '';
        if (!TYPES.has(name)) this.fail(`expected a type after "is" (${[...TYPES].join(', ')}), found ${describe(type)}`, type.at);
        left = { kind: 'is', operand: left, type: name, not, at: t.at };
        continue;
      }
      left = { kind: 'binary', op: t.text, left, right: this.expression(tier + 1), at: t.at };
    }
  }

  private unary(): Node {
    const t = this.peek();
    if (t.kind === 'sym' && (t.text === '!' || t.text === '-')) {
      this.next();
      return { kind: 'unary', op: t.text, operand: this.nested(() => this.unary(), t.at), at: t.at };
    }
    return this.postfix(this.term());
  }

  private nested<T>(parse: () => T, at: number): T {
    if (++this.depth > MAPPING_LIMITS.depth) this.fail(`the expression nests deeper than ${MAPPING_LIMITS.depth} levels`, at);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private postfix(node: Node): Node {
    for (;;) {
      if (this.is('.')) {
        this.next();
        const name = this.next();
        if (name.kind !== 'id') this.fail(`expected a field or function name after ".", found ${describe(name)}`, name.at);
        node = this.is('(') ? this.call(name, [node]) : { kind: 'select', target: node, key: { kind: 'lit', value: name.text, at: name.at }, at: name.at };
      } else if (this.is('[')) {
        const at = this.next().at;
        const key = this.nested(() => this.expression(), at);
        this.expect(']');
        node = { kind: 'select', target: node, key, at };
      } else {
        return node;
      }
    }
  }

  private term(): Node {
    const t = this.peek();
    if (t.kind === 'num' || t.kind === 'str') {
      this.next();
      return { kind: 'lit', value: t.value!, at: t.at };
    }
    if (t.kind === 'sym' && t.text === '(') {
      this.next();
      const node = this.nested(() => this.expression(), t.at);
      this.expect(')');
      return node;
    }
    if (t.kind === 'sym' && t.text === '[') return this.nested(() => this.array(), t.at);
    if (t.kind === 'sym' && t.text === '{') return this.nested(() => this.object(), t.at);
    if (t.kind !== 'id') this.fail(`expected a value, found ${describe(t)}`, t.at);
    if (t.text === 'true' || t.text === 'false' || t.text === 'null') {
      this.next();
      return { kind: 'lit', value: t.text === 'null' ? null : t.text === 'true', at: t.at };
    }
    if (t.text === 'if' && !this.isIfCall()) return this.nested(() => this.ifExpression(), t.at);
    this.next();
    if (this.is('(')) return this.call(t, []);
    if (KEYWORDS.has(t.text)) this.fail(`unexpected ${JSON.stringify(t.text)}`, t.at);
    if (!this.scopes.some((s) => s.includes(t.text))) this.fail(`unknown variable ${JSON.stringify(t.text)} (the payload is "input")`, t.at);
    return { kind: 'var', name: t.text, at: t.at };
  }

  /** `if(c, a, b)` is the function; `if (c) { a }` the expression: told apart by the brace after the parenthesis. */
  private isIfCall(): boolean {
    if (!this.is('(', 1)) return false;
    let depth = 0;
    for (let j = this.i + 1; j < this.tokens.length; j++) {
      const t = this.tokens[j];
      if (t.kind === 'sym' && '([{'.includes(t.text)) depth++;
      else if (t.kind === 'sym' && ')]}'.includes(t.text) && --depth === 0) return !(this.tokens[j + 1]?.kind === 'sym' && this.tokens[j + 1].text === '{');
      if (t.kind === 'eof') return true;
    }
    return true;
  }

  private ifExpression(): Node {
    const at = this.expect('if').at;
    const branches: Array<[Node, Node]> = [];
    let otherwise: Node | undefined;
    const block = () => {
      this.expect('{');
      const node = this.expression();
      this.expect('}');
      return node;
    };
    branches.push([this.expression(), block()]);
    while (this.is('else')) {
      this.next();
      if (this.is('if')) {
        this.next();
        branches.push([this.expression(), block()]);
      } else {
        otherwise = block();
        break;
      }
    }
    return { kind: 'if', branches, otherwise, at };
  }

  private array(): Node {
    const at = this.expect('[').at;
    const items: Array<{ spread: boolean; node: Node }> = [];
    while (!this.is(']')) {
      const spread = this.is('...') && !!this.next();
      items.push({ spread, node: this.expression() });
      if (!this.is(']')) this.separator(']');
    }
    this.next();
    return { kind: 'array', items, at };
  }

  private object(): Node {
    const at = this.expect('{').at;
    const items: Array<{ spread: true; node: Node } | { spread: false; key: Node; value: Node }> = [];
    while (!this.is('}')) {
      if (this.is('...')) {
        this.next();
        items.push({ spread: true, node: this.expression() });
      } else {
        const key = this.expression();
        this.expect(':');
        items.push({ spread: false, key, value: this.expression() });
      }
      if (!this.is('}')) this.separator('}');
    }
    this.next();
    return { kind: 'object', items, at };
  }

  /** The parameters of a lambda starting here (`x =>` or `(a, b) =>`), consumed up to the arrow; else nothing is consumed. */
  private lambdaParams(): string[] | undefined {
    if (this.peek().kind === 'id' && this.is('=>', 1)) return [this.next().text];
    if (!this.is('(')) return undefined;
    const params: string[] = [];
    let j = 1;
    if (!this.is(')', j)) {
      for (;;) {
        const t = this.peek(j);
        if (t.kind !== 'id' || KEYWORDS.has(t.text)) return undefined;
        params.push(t.text);
        j++;
        if (this.is(')', j)) break;
        if (!this.is(',', j)) return undefined;
        j++;
      }
    }
    if (!this.is('=>', j + 1)) return undefined;
    this.i += j + 1;
    return params;
  }

  private argument(): Arg {
    const at = this.peek().at;
    const params = this.lambdaParams();
    if (!params) return this.expression();
    this.expect('=>');
    this.scopes.push(params);
    try {
      return { kind: 'lambda', params, body: this.nested(() => this.expression(), at), at };
    } finally {
      this.scopes.pop();
    }
  }

  private call(name: Token, receiver: Node[]): Node {
    const open = this.expect('(');
    const args: Arg[] = [...receiver];
    this.nested(() => {
      while (!this.is(')')) {
        args.push(this.argument());
        if (!this.is(')')) this.separator(')');
      }
    }, open.at);
    this.next();
    const fn = FUNCTIONS[name.text];
    if (!Object.hasOwn(FUNCTIONS, name.text)) this.fail(`unknown function ${JSON.stringify(name.text)}`, name.at);
    const [min, max] = fn.arity;
    if (args.length < min || args.length > max) {
      const wanted = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
      this.fail(`${name.text} takes ${wanted} argument${wanted === '1' ? '' : 's'}, given ${args.length}`, name.at);
    }
    for (const [i, arg] of args.entries()) {
      const lambda = arg.kind === 'lambda';
      const takes = fn.lambdas === 'last' ? i === args.length - 1 : fn.lambdas?.includes(i) ?? false;
      if (lambda && !takes && !fn.either?.includes(i)) this.fail(`argument ${i + 1} of ${name.text} is not a function`, arg.at);
      if (!lambda && takes) this.fail(`argument ${i + 1} of ${name.text} is a function (x => ...)`, arg.at);
    }
    return { kind: 'call', name: name.text, args, at: name.at };
  }
}

function describe(t: Token): string {
  return t.kind === 'eof' ? t.text : t.kind === 'str' ? `the string ${JSON.stringify(t.text)}` : JSON.stringify(t.text);
}

// ---------------------------------------------------------------------------------------------- evaluation

class Budget {
  private spent = 0;
  constructor(private readonly fail: (message: string) => never) {}
  spend(units: number): void {
    this.spent += units;
    if (this.spent > MAPPING_LIMITS.work) this.fail(`the mapping did more work than it may (${MAPPING_LIMITS.work} steps)`);
  }
}

interface Context {
  source: string;
  budget: Budget;
  now: () => number;
  fail: (message: string) => never;
}

type Scope = ReadonlyMap<string, Value>;

const isObject = (v: Value): v is { [key: string]: Value } => typeof v === 'object' && v !== null && !Array.isArray(v);
const typeOf = (v: Value): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v);
const truthy = (v: Value): boolean => v !== null && v !== false;

/** Walks a value, spending a unit per node, so a value shared many times over costs what it is, not what it looks. */
function walk(v: Value, cx: Context, depth = 0): void {
  cx.budget.spend(1 + (typeof v === 'string' ? v.length : 0));
  if (depth > MAPPING_LIMITS.valueDepth) cx.fail(`a value nests deeper than ${MAPPING_LIMITS.valueDepth} levels`);
  if (Array.isArray(v)) for (const x of v) walk(x, cx, depth + 1);
  else if (isObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      cx.budget.spend(k.length);
      walk(x, cx, depth + 1);
    }
  }
}

/** Copies `source`'s entries onto `target` as data (a key "__proto__" is a key like any other). */
function assign(target: { [key: string]: Value }, source: { [key: string]: Value }): { [key: string]: Value } {
  for (const [k, v] of Object.entries(source)) setKey(target, k, v);
  return target;
}

function setKey(target: { [key: string]: Value }, key: string, value: Value): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Text joined from parts, refused before it is built when it would be longer than a string may be. */
function joinText(parts: string[], separator: string, cx: Context): string {
  const length = parts.reduce((n, p) => n + p.length, separator.length * Math.max(0, parts.length - 1));
  if (length > MAPPING_LIMITS.string) cx.fail(`a string would have more than ${MAPPING_LIMITS.string} characters`);
  return built(parts.join(separator), cx);
}

function toJson(v: Value, cx: Context): string {
  walk(v, cx);
  const text = JSON.stringify(v);
  if (text.length > MAPPING_LIMITS.output) cx.fail(`a value has more than ${MAPPING_LIMITS.output} characters as JSON`);
  return text;
}

function equal(a: Value, b: Value, cx: Context, depth = 0): boolean {
  cx.budget.spend(1 + (typeof a === 'string' ? a.length : 0));
  if (a === b) return true;
  if (depth > MAPPING_LIMITS.valueDepth) cx.fail(`a value nests deeper than ${MAPPING_LIMITS.valueDepth} levels`);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i], cx, depth + 1));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k], cx, depth + 1));
  }
  return false;
}

/** A value built: its size is spent and bounded. */
function built<T extends Value>(v: T, cx: Context): T {
  const size = typeof v === 'string' ? v.length : Array.isArray(v) ? v.length : isObject(v) ? Object.keys(v).length : 0;
  cx.budget.spend(1 + size);
  if (typeof v === 'string' && v.length > MAPPING_LIMITS.string) cx.fail(`a string has more than ${MAPPING_LIMITS.string} characters`);
  if (typeof v !== 'string' && size > MAPPING_LIMITS.items) cx.fail(`an array or object has more than ${MAPPING_LIMITS.items} items`);
  return v;
}

function text(v: Value, cx: Context): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return toJson(v, cx);
}

function number(v: Value, what: string, cx: Context): number {
  if (typeof v !== 'number') cx.fail(`${what} expects a number, got ${typeOf(v)}`);
  return v as number;
}

function integer(v: Value, what: string, cx: Context): number {
  const n = number(v, what, cx);
  if (!Number.isInteger(n)) cx.fail(`${what} expects an integer, got ${n}`);
  return n;
}

function finite(n: number, what: string, cx: Context): number {
  if (!Number.isFinite(n)) cx.fail(`${what} gave a number that is not finite`);
  return n;
}

/** Evaluates a node; an error not yet placed is placed at the innermost node it came from. */
function evaluate(node: Node, scope: Scope, cx: Context): Value {
  try {
    return evaluateNode(node, scope, cx);
  } catch (err) {
    if (err instanceof MappingError && !err.located) throw new MappingError(`${position(cx.source, node.at)}: ${err.message}`);
    throw err;
  }
}

function evaluateNode(node: Node, scope: Scope, cx: Context): Value {
  cx.budget.spend(1);
  switch (node.kind) {
    case 'lit':
      return node.value;
    case 'var':
      return scope.get(node.name) ?? null;
    case 'array': {
      const out: Value[] = [];
      for (const item of node.items) {
        const v = evaluate(item.node, scope, cx);
        if (!item.spread) out.push(v);
        else if (Array.isArray(v)) for (const x of v) out.push(x);
        else if (v !== null) cx.fail(`only an array can be spread into an array, got ${typeOf(v)}`);
      }
      return built(out, cx);
    }
    case 'object': {
      const out: { [key: string]: Value } = {};
      for (const item of node.items) {
        if (item.spread) {
          const v = evaluate(item.node, scope, cx);
          if (isObject(v)) assign(out, v);
          else if (v !== null) cx.fail(`only an object can be spread into an object, got ${typeOf(v)}`);
          continue;
        }
        const key = evaluate(item.key, scope, cx);
        if (typeof key === 'object') cx.fail(`an object key is a string, a number or a boolean, got ${typeOf(key)}`);
        setKey(out, text(key, cx), evaluate(item.value, scope, cx));
      }
      return built(out, cx);
    }
    case 'select': {
      const target = evaluate(node.target, scope, cx);
      const key = evaluate(node.key, scope, cx);
      if (Array.isArray(target) && typeof key === 'number') return Number.isInteger(key) && key >= 0 && key < target.length ? target[key] : null;
      if (isObject(target) && typeof key === 'string') return Object.hasOwn(target, key) ? target[key] : null;
      if (typeof key !== 'string' && typeof key !== 'number') cx.fail(`a selector is a string or a number, got ${typeOf(key)}`);
      return null;
    }
    case 'unary': {
      const v = evaluate(node.operand, scope, cx);
      return node.op === '!' ? !truthy(v) : -number(v, 'unary -', cx);
    }
    case 'is': {
      const v = evaluate(node.operand, scope, cx);
      const t = typeOf(v);
      const match =
        node.type === t ||
        (t === 'number' && (node.type === 'int' ? Number.isInteger(v) : node.type === 'float' && !Number.isInteger(v)));
      return match !== node.not;
    }
    case 'if': {
      for (const [cond, then] of node.branches) if (truthy(evaluate(cond, scope, cx))) return evaluate(then, scope, cx);
      return node.otherwise ? evaluate(node.otherwise, scope, cx) : null;
    }
    case 'binary':
      return binary(node.op, node.left, node.right, scope, cx);
    case 'call':
      return FUNCTIONS[node.name].run(node.args, scope, cx);
  }
}

function binary(op: string, leftNode: Node, rightNode: Node, scope: Scope, cx: Context): Value {
  const left = evaluate(leftNode, scope, cx);
  if (op === '&&') return truthy(left) && truthy(evaluate(rightNode, scope, cx));
  if (op === '||') return truthy(left) || truthy(evaluate(rightNode, scope, cx));
  const right = evaluate(rightNode, scope, cx);
  if (op === '==') return equal(left, right, cx);
  if (op === '!=') return !equal(left, right, cx);
  const a = number(left, op, cx);
  const b = number(right, op, cx);
  switch (op) {
    case '+':
      return finite(a + b, op, cx);
    case '-':
      return finite(a - b, op, cx);
    case '*':
      return finite(a * b, op, cx);
    case '/':
      if (b === 0) cx.fail('division by zero');
      return finite(a / b, op, cx);
    case '%':
      if (b === 0) cx.fail('division by zero (%)');
      return a % b;
    case '<':
      return a < b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    default:
      return a >= b;
  }
}

// ---------------------------------------------------------------------------------------------- functions

interface Fn {
  arity: [number, number];
  /** Which arguments are lambdas: by index, or the last one. */
  lambdas?: number[] | 'last';
  /** Arguments that may be a lambda or a value. */
  either?: number[];
  run(args: Arg[], scope: Scope, cx: Context): Value;
}

type Callable = (...args: Value[]) => Value;

/** A lambda argument, or a value that is not one, as a function of the values it is given. */
function callable(arg: Arg, scope: Scope, cx: Context): Callable | Value {
  if (arg.kind !== 'lambda') return evaluate(arg, scope, cx);
  return (...values: Value[]) => {
    const inner = new Map(scope);
    arg.params.forEach((p, i) => inner.set(p, values[i] ?? null));
    return evaluate(arg.body, inner, cx);
  };
}

/**
 * A function of its arguments' values (no lambdas). Its work grows with the strings and lists it is given,
 * which are spent for here, before it runs: a unit per character and per element. `charged: false` is for a
 * function whose work is building its result from them, which `built` charges.
 */
function plain(min: number, max: number, run: (values: Value[], cx: Context) => Value, charged = true): Fn {
  return {
    arity: [min, max],
    run: (args, scope, cx) => {
      const values = args.map((a) => evaluate(a as Node, scope, cx));
      if (charged) for (const v of values) if (typeof v === 'string' || Array.isArray(v)) cx.budget.spend(v.length);
      return run(values, cx);
    },
  };
}

/** A function of a value and lambdas (or, where `either` says, lists). */
function functor(min: number, max: number, lambdas: number[] | 'last', run: (values: Array<Value | Callable>, cx: Context) => Value, either?: number[]): Fn {
  return {
    arity: [min, max],
    lambdas,
    either,
    run: (args, scope, cx) => run(args.map((a) => callable(a, scope, cx)), cx),
  };
}

/** `max` and `min`: of their arguments, or of the one array given. */
function extreme(name: string, better: (a: number, b: number) => boolean): Fn {
  return plain(1, Infinity, (vs, cx) =>
    (vs.length === 1 ? list(vs[0], name, cx) : vs).reduce<number | null>((best, v) => {
      const n = number(v, name, cx);
      return best === null || better(n, best) ? n : best;
    }, null),
  );
}

const math = (f: (x: number) => number) => plain(1, 1, ([x], cx) => finite(f(number(x, 'the function', cx)), 'the function', cx));

function list(v: Value, fn: string, cx: Context): Value[] {
  if (!Array.isArray(v)) cx.fail(`${fn} expects an array, got ${typeOf(v)}`);
  return v as Value[];
}

function str(v: Value, fn: string, cx: Context): string {
  if (typeof v !== 'string') cx.fail(`${fn} expects a string, got ${typeOf(v)}`);
  return v as string;
}

/** Start and end of a slice of `length`, negative counting from the end, clamped. */
function range(length: number, start: Value, end: Value, fn: string, cx: Context): [number, number] {
  const at = (v: Value, dflt: number) => {
    if (v === null) return dflt;
    const n = integer(v, fn, cx);
    return Math.max(0, Math.min(length, n < 0 ? length + n : n));
  };
  return [at(start, 0), at(end, length)];
}

function toInt(v: Value): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) : undefined;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

function toFloat(v: Value): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().replace(/^([+-]?\d*),(\d+)$/, '$1.$2');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

function toBool(v: Value): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  return undefined;
}

function convert(f: (v: Value) => Value | undefined, name: string): Fn {
  return plain(1, 1, ([v], cx) => f(v) ?? cx.fail(`${name} cannot convert ${text(v, cx).slice(0, 100)} (${typeOf(v)})`));
}
const tryConvert = (f: (v: Value) => Value | undefined) => plain(2, 2, ([v, dflt]) => f(v) ?? dflt);

/** The entries of an array (value, index) or object (value, key) a functor works on. */
function entries(v: Value, fn: string, cx: Context): Array<[Value, Value]> {
  if (Array.isArray(v)) return v.map((x, i) => [x, i]);
  if (isObject(v)) return Object.entries(v).map(([k, x]) => [x, k]);
  return cx.fail(`${fn} expects an array or an object, got ${typeOf(v)}`);
}

/** `select` and `except`: entries kept by a predicate or by a list of values (arrays) or keys (objects). */
function choose(keep: boolean, name: string): Fn {
  return functor(
    2,
    2,
    [],
    ([x, by], cx) => {
      if (x === null) return null;
      const kept = entries(x as Value, name, cx).filter(([v, k]) => {
        const hit = typeof by === 'function' ? truthy(by(v, k)) : list(by, name, cx).some((l) => equal(l, Array.isArray(x) ? v : k, cx));
        return hit === keep;
      });
      return built(Array.isArray(x) ? kept.map(([v]) => v) : Object.fromEntries(kept.map(([v, k]) => [k as string, v])), cx);
    },
    [1],
  );
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Reads digits at `at`: at least one, at most `max`; the number and where reading stopped. */
function digits(value: string, at: number, max: number): [number, number] | undefined {
  let end = at;
  while (end < value.length && end - at < max && value[end] >= '0' && value[end] <= '9') end++;
  return end === at ? undefined : [Number(value.slice(at, end)), end];
}

/**
 * The strftime directives supported: how a date formats, and how text is read (greedily, left to right, never
 * going back) into the parts [year, month (0-11), day, hour, minute, second, millisecond, offset minutes].
 */
const DIRECTIVES: Record<string, { format: (d: Date) => string; read: (value: string, at: number, parts: number[]) => number | undefined }> = {
  Y: {
    format: (d) => pad(d.getUTCFullYear(), 4),
    read: (v, at, p) => {
      const r = digits(v, at, 4);
      if (r) p[0] = r[0];
      return r?.[1];
    },
  },
  '%': { format: () => '%', read: (v, at) => (v[at] === '%' ? at + 1 : undefined) },
  b: {
    format: (d) => MONTHS[d.getUTCMonth()],
    read: (v, at, p) => {
      const month = MONTHS.findIndex((m) => v.slice(at, at + 3).toLowerCase() === m.toLowerCase());
      if (month < 0) return undefined;
      p[1] = month;
      return at + 3;
    },
  },
  '.3f': {
    format: (d) => `.${pad(d.getUTCMilliseconds(), 3)}`,
    read: (v, at, p) => {
      const r = v[at] === '.' ? digits(v, at + 1, 9) : undefined;
      if (r) p[6] = Number(v.slice(at + 1, r[1]).padEnd(3, '0').slice(0, 3));
      return r?.[1];
    },
  },
  z: {
    format: () => '+0000',
    read: (v, at, p) => {
      if (v[at] === 'Z') return (p[7] = 0), at + 1;
      const sign = v[at] === '+' ? 1 : v[at] === '-' ? -1 : 0;
      const hours = sign ? digits(v, at + 1, 2) : undefined;
      if (!hours || hours[1] !== at + 3) return undefined;
      const colon = v[hours[1]] === ':' ? 1 : 0;
      const minutes = digits(v, hours[1] + colon, 2);
      if (!minutes || minutes[1] !== hours[1] + colon + 2) return undefined;
      p[7] = sign * (hours[0] * 60 + minutes[0]);
      return minutes[1];
    },
  },
};
for (const [name, part, get, shift] of [
  ['m', 1, (d: Date) => d.getUTCMonth() + 1, -1],
  ['d', 2, (d: Date) => d.getUTCDate(), 0],
  ['H', 3, (d: Date) => d.getUTCHours(), 0],
  ['M', 4, (d: Date) => d.getUTCMinutes(), 0],
  ['S', 5, (d: Date) => d.getUTCSeconds(), 0],
  ['y', 0, (d: Date) => d.getUTCFullYear() % 100, 2000],
] as const) {
  DIRECTIVES[name] = {
    format: (d) => pad(get(d)),
    read: (v, at, p) => {
      const r = digits(v, at, 2);
      if (r) p[part] = r[0] + shift;
      return r?.[1];
    },
  };
}
DIRECTIVES['.f'] = DIRECTIVES['.3f'];
const EXPANSIONS: Record<string, string> = { F: '%Y-%m-%d', T: '%H:%M:%S', D: '%m/%d/%y', R: '%H:%M' };

function directives(format: string, fn: string, cx: Context): Array<string | { name: string }> {
  const parts: Array<string | { name: string }> = [];
  const expanded = format.replace(/%([FTDR])/g, (_, c: string) => EXPANSIONS[c]);
  for (let i = 0; i < expanded.length; i++) {
    if (expanded[i] !== '%') {
      parts.push(expanded[i]);
      continue;
    }
    const name = ['.3f', '.f'].find((d) => expanded.startsWith(d, i + 1)) ?? expanded[i + 1];
    if (!name || !Object.hasOwn(DIRECTIVES, name)) cx.fail(`${fn}: the format directive %${name ?? ''} is not supported (supported: %Y %m %d %H %M %S %y %b %.3f %z %F %T %D %R %%)`);
    parts.push({ name });
    i += name.length;
  }
  return parts;
}

function formatTimestamp(ms: number, format: string, cx: Context): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) cx.fail(`format_timestamp: ${ms} is not a time`);
  return joinText(
    directives(format, 'format_timestamp', cx).map((p) => (typeof p === 'string' ? p : DIRECTIVES[p.name].format(date))),
    '',
    cx,
  );
}

function parseTimestamp(value: string, format: string, cx: Context): number {
  const parts = [1970, 0, 1, 0, 0, 0, 0, 0];
  let at = 0;
  const mismatch = () => cx.fail(`to_unix_timestamp: ${JSON.stringify(value.slice(0, 100))} does not match the format ${JSON.stringify(format)}`);
  for (const p of directives(format, 'to_unix_timestamp', cx)) {
    const end = typeof p === 'string' ? (value[at] === p ? at + 1 : undefined) : DIRECTIVES[p.name].read(value, at, parts);
    if (end === undefined) mismatch();
    at = end!;
  }
  if (at !== value.length) mismatch();
  const [y, mo, d, h, mi, s, ms, offset] = parts;
  const time = Date.UTC(y, mo, d, h, mi, s, ms);
  const check = new Date(time);
  if (check.getUTCMonth() !== mo || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    cx.fail(`to_unix_timestamp: ${JSON.stringify(value.slice(0, 100))} is not a valid time`);
  }
  return time - offset * 60_000;
}

const FUNCTIONS: Record<string, Fn> = {
  // Math
  acos: math(Math.acos),
  asin: math(Math.asin),
  atan: math(Math.atan),
  cos: math(Math.cos),
  sin: math(Math.sin),
  tan: math(Math.tan),
  exp: math(Math.exp),
  sqrt: math(Math.sqrt),
  ceil: math(Math.ceil),
  floor: math(Math.floor),
  round: math(Math.round),
  atan2: plain(2, 2, ([x, y], cx) => Math.atan2(number(x, 'atan2', cx), number(y, 'atan2', cx))),
  pow: plain(2, 2, ([x, y], cx) => finite(number(x, 'pow', cx) ** number(y, 'pow', cx), 'pow', cx)),
  log: plain(2, 2, ([x, y], cx) => finite(Math.log(number(x, 'log', cx)) / Math.log(number(y, 'log', cx)), 'log', cx)),
  max: extreme('max', (a, b) => a > b),
  min: extreme('min', (a, b) => a < b),
  sum: plain(1, 1, ([x], cx) => finite(list(x, 'sum', cx).reduce<number>((a, v) => a + number(v, 'sum', cx), 0), 'sum', cx)),
  // Logic
  all: plain(1, 1, ([x], cx) => list(x, 'all', cx).every(truthy)),
  any: plain(1, 1, ([x], cx) => list(x, 'any', cx).some(truthy)),
  coalesce: plain(1, Infinity, (vs) => vs.find((v) => v !== null) ?? null),
  case: {
    arity: [3, Infinity],
    run(args, scope, cx) {
      const x = evaluate(args[0] as Node, scope, cx);
      let i = 1;
      for (; i + 1 < args.length; i += 2) if (equal(x, evaluate(args[i] as Node, scope, cx), cx)) return evaluate(args[i + 1] as Node, scope, cx);
      return i < args.length ? evaluate(args[i] as Node, scope, cx) : null;
    },
  },
  if: {
    arity: [2, 3],
    run(args, scope, cx) {
      if (truthy(evaluate(args[0] as Node, scope, cx))) return evaluate(args[1] as Node, scope, cx);
      return args[2] ? evaluate(args[2] as Node, scope, cx) : null;
    },
  },
  if_value: functor(2, 2, [1], ([x, f]) => (x === null ? null : (f as Callable)(x as Value))),
  // Conversions
  string: plain(1, 1, ([x], cx) => built(text(x, cx), cx)),
  int: convert(toInt, 'int'),
  float: convert(toFloat, 'float'),
  try_int: tryConvert(toInt),
  try_float: tryConvert(toFloat),
  try_bool: tryConvert(toBool),
  parse_json: plain(1, 1, ([x], cx) => {
    if (typeof x !== 'string') return x;
    try {
      const v = JSON.parse(x) as Value;
      walk(v, cx);
      return v;
    } catch (err) {
      return cx.fail(`parse_json: ${(err as Error).message}`);
    }
  }),
  // Strings
  concat: plain(0, Infinity, (vs, cx) => joinText(vs.map((v) => text(v, cx)), '', cx), false),
  length: plain(1, 1, ([x], cx) => {
    if (typeof x === 'string') return built([...x], cx).length;
    if (Array.isArray(x)) return x.length;
    if (isObject(x)) return Object.keys(x).length;
    return cx.fail(`length expects a string, an array or an object, got ${typeOf(x)}`);
  }),
  lower: plain(1, 1, ([x], cx) => built(text(x, cx).toLowerCase(), cx)),
  upper: plain(1, 1, ([x], cx) => built(text(x, cx).toUpperCase(), cx)),
  trim_whitespace: plain(1, 1, ([x], cx) => built(str(x, 'trim_whitespace', cx).trim(), cx)),
  substring: plain(2, 3, ([x, start, end], cx) => {
    const chars = [...str(x, 'substring', cx)];
    const [a, b] = range(chars.length, start, end ?? null, 'substring', cx);
    return built(chars.slice(a, Math.max(a, b)).join(''), cx);
  }),
  split: plain(2, 2, ([x, sep], cx) => {
    const s = str(x, 'split', cx);
    const by = str(sep, 'split', cx);
    return built(by === '' ? ['', ...s, ''] : s.split(by), cx);
  }),
  replace: plain(3, 3, ([x, from, to], cx) => {
    const s = str(x, 'replace', cx);
    const f = str(from, 'replace', cx);
    return f === '' ? s : joinText(s.split(f), str(to, 'replace', cx), cx);
  }),
  starts_with: plain(2, 2, ([x, p], cx) => str(x, 'starts_with', cx).startsWith(str(p, 'starts_with', cx))),
  ends_with: plain(2, 2, ([x, p], cx) => str(x, 'ends_with', cx).endsWith(str(p, 'ends_with', cx))),
  contains: plain(2, 2, ([x, a], cx) => {
    if (typeof x !== 'string') return list(x, 'contains', cx).some((v) => equal(v, a, cx));
    return x.includes(str(a, 'contains', cx));
  }),
  chars: plain(1, 1, ([x], cx) => built([...str(x, 'chars', cx)], cx)),
  string_join: plain(1, 2, ([x, sep], cx) =>
    joinText(
      list(x, 'string_join', cx).map((v) => text(v, cx)),
      sep === undefined || sep === null ? '' : str(sep, 'string_join', cx),
      cx,
    ),
  ),
  translate: plain(3, 3, ([x, from, to], cx) => {
    const f = [...str(from, 'translate', cx)];
    const t = [...str(to, 'translate', cx)];
    if (f.length !== t.length) cx.fail(`translate: "from" has ${f.length} characters and "to" ${t.length}; they must have as many`);
    return joinText(built([...str(x, 'translate', cx)], cx).map((c) => (f.includes(c) ? t[f.indexOf(c)] : c)), '', cx);
  }),
  // Arrays and objects
  chunk: plain(2, 2, ([x, size], cx) => {
    const xs = list(x, 'chunk', cx);
    const n = integer(size, 'chunk', cx);
    if (n < 1) cx.fail('chunk: the size is at least 1');
    const out: Value[] = [];
    for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
    return built(out, cx);
  }),
  slice: plain(2, 3, ([x, start, end], cx) => {
    const xs = list(x, 'slice', cx);
    const [a, b] = range(xs.length, start, end ?? null, 'slice', cx);
    return built(xs.slice(a, Math.max(a, b)), cx);
  }),
  tail: plain(1, 2, ([x, n], cx) => {
    const xs = list(x, 'tail', cx);
    if (n === undefined || n === null) return xs.length ? xs[xs.length - 1] : null;
    const k = integer(n, 'tail', cx);
    if (k <= 1) return k === 1 && xs.length ? xs[xs.length - 1] : null;
    return built(xs.slice(Math.max(0, xs.length - k)), cx);
  }),
  join: plain(1, Infinity, (vs, cx) => {
    const present = vs.filter((v) => v !== null);
    if (present.every(Array.isArray)) return built(([] as Value[]).concat(...present), cx);
    if (present.every(isObject)) return built(present.reduce<{ [key: string]: Value }>((out, o) => assign(out, o as { [key: string]: Value }), {}), cx);
    return cx.fail('join takes objects or arrays, not both, nor other values');
  }),
  pairs: plain(1, 1, ([x], cx) => {
    if (!isObject(x)) cx.fail(`pairs expects an object, got ${typeOf(x)}`);
    return built(Object.entries(x as object).map(([key, value]) => ({ key, value })), cx);
  }),
  map: functor(2, 2, [1], ([x, f], cx) => {
    if (x === null) return null;
    const fn = f as Callable;
    if (isObject(x as Value)) return built(Object.fromEntries(Object.entries(x as object).map(([k, v]) => [k, fn(v, k)])), cx);
    return built(list(x as Value, 'map', cx).map((v, i) => fn(v, i)), cx);
  }),
  filter: functor(2, 2, [1], ([x, f], cx) => {
    if (x === null) return null;
    const fn = f as Callable;
    if (isObject(x as Value)) return built(Object.fromEntries(Object.entries(x as object).filter(([k, v]) => truthy(fn(v, k)))), cx);
    return built(list(x as Value, 'filter', cx).filter((v, i) => truthy(fn(v, i))), cx);
  }),
  flatmap: functor(2, 2, [1], ([x, f], cx) => {
    if (x === null) return null;
    const out: Value[] = [];
    list(x as Value, 'flatmap', cx).forEach((v, i) => {
      const r = (f as Callable)(v, i);
      if (Array.isArray(r)) for (const y of r) out.push(y);
      else out.push(r);
      if (out.length > MAPPING_LIMITS.items) cx.fail(`an array or object has more than ${MAPPING_LIMITS.items} items`);
    });
    return built(out, cx);
  }),
  reduce: functor(3, 3, [1], ([x, f, init], cx) => list(x as Value, 'reduce', cx).reduce<Value>((acc, v) => (f as Callable)(acc, v), init as Value)),
  zip: functor(3, Infinity, 'last', (vs, cx) => {
    const f = vs[vs.length - 1] as Callable;
    const lists = vs.slice(0, -1).map((v) => list(v as Value, 'zip', cx));
    const n = Math.max(...lists.map((l) => l.length));
    const out: Value[] = [];
    for (let i = 0; i < n; i++) out.push(f(...lists.map((l) => l[i] ?? null)));
    return built(out, cx);
  }),
  to_object: functor(2, 3, [1, 2], ([x, key, value], cx) => {
    const out: { [key: string]: Value } = {};
    for (const v of list(x as Value, 'to_object', cx)) {
      setKey(out, text((key as Callable)(v), cx), value ? (value as Callable)(v) : v);
    }
    return built(out, cx);
  }),
  distinct_by: functor(2, 2, [1], ([x, f], cx) => {
    const seen: Value[] = [];
    const kept = entries(x as Value, 'distinct_by', cx).filter(([v, k]) => {
      const key = (f as Callable)(v, k);
      if (seen.some((s) => equal(s, key, cx))) return false;
      seen.push(key);
      return true;
    });
    return built(Array.isArray(x) ? kept.map(([v]) => v) : Object.fromEntries(kept.map(([v, k]) => [k as string, v])), cx);
  }),
  select: choose(true, 'select'),
  except: choose(false, 'except'),
  // Time
  now: plain(0, 0, (_, cx) => cx.now()),
  to_unix_timestamp: plain(2, 2, ([x, f], cx) => parseTimestamp(str(x, 'to_unix_timestamp', cx), str(f, 'to_unix_timestamp', cx), cx)),
  format_timestamp: plain(2, 2, ([x, f], cx) => formatTimestamp(integer(x, 'format_timestamp', cx), str(f, 'format_timestamp', cx), cx)),
};

export interface CompiledMapping {
  /** Evaluates the expression with `input`; throws a MappingError saying what failed, and where. */
  run(input: unknown, options: { now: () => number }): Value;
}

/** Parses and checks an expression; throws a MappingError naming the line and column of what is wrong. */
export function compileMapping(source: string): CompiledMapping {
  const tree = new Parser(source, tokenize(source)).program();
  return {
    run(input, { now }) {
      const cx: Context = {
        source,
        now,
        budget: undefined as unknown as Budget,
        fail: (message) => {
          throw new MappingError(message, false);
        },
      };
      cx.budget = new Budget(cx.fail);
      const result = evaluate(tree, new Map([['input', (input ?? null) as Value]]), cx);
      try {
        toJson(result, cx);
      } catch (err) {
        if (err instanceof MappingError) throw new MappingError(`the result: ${err.message}`);
        throw err;
      }
      return result;
    },
  };
}
