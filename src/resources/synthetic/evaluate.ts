/**
 * Evaluating a parsed expression (expression.ts) at the output timestamps, one column at a time: each input
 * series is a column of its values there, each node a column computed from its arguments' columns. A point
 * whose value cannot be computed carries an error instead of a value, as the reference words them: TYPE_ERROR
 * (a string where a number is needed), BAD_DOMAIN (division by zero, the square root of a negative number,
 * ...), OVERFLOW (a result of 1e100 or more in absolute value, as data points may not hold). An error passes
 * to everything computed from the point, except through `on_error`, which gives its default instead.
 */
import { pause } from '../../storage/event-loop.js';
import type { FunctionName, Node } from './expression.js';

export interface Column {
  /** The values, when they are numbers. */
  num: Float64Array | null;
  /** The values, when they are strings (a string time series). */
  str: string[] | null;
  /** The error of each point that has one (undefined for the others); null when none has. */
  err: Array<string | undefined> | null;
}

const MAX_ABS = 1e100;

export const ERRORS = {
  divisionByZero: 'Error BAD_DOMAIN: Division by zero',
  negativeRoot: 'Error BAD_DOMAIN: Square root of a negative number',
  logarithm: 'Error BAD_DOMAIN: Logarithm of a number that is not positive',
  notANumber: 'Error BAD_DOMAIN: The result is not a number',
  decimals: 'Error BAD_DOMAIN: round takes a whole number of decimals greater than -10 and less than 10',
  overflow: `Error OVERFLOW: The result is ${MAX_ABS} or more in absolute value`,
  typeOf: (what: string) => `Error TYPE_ERROR: ${what} takes numbers, and this value is a string`,
  stringResult: 'Error TYPE_ERROR: The expression gives strings; map() turns strings into numbers',
} as const;

const constant = (n: number, value: number): Column => ({ num: new Float64Array(n).fill(value), str: null, err: null });

/** The errors the points already have from `args`, a string argument being a type error for `what`. */
function inherited(n: number, args: readonly Column[], what: string): Array<string | undefined> | null {
  let err: Array<string | undefined> | null = null;
  for (const a of args) {
    if (a.str) {
      err ??= new Array(n);
      for (let i = 0; i < n; i++) err[i] ??= ERRORS.typeOf(what);
    } else if (a.err) {
      err ??= new Array(n);
      for (let i = 0; i < n; i++) if (a.err[i] !== undefined) err[i] ??= a.err[i];
    }
  }
  return err;
}

/** The problem with a computed value, if any: not a number, or too large. */
const problemOf = (v: number): string | undefined => (v !== v ? ERRORS.notANumber : !(Math.abs(v) < MAX_ABS) ? ERRORS.overflow : undefined);

/**
 * A column computed point by point from numeric columns: `f` gives the value, `check` a problem of the
 * arguments that makes the point an error (before the value's own checks).
 */
function pointwise(n: number, args: readonly Column[], what: string, f: (v: Float64Array) => number, check?: (v: Float64Array) => string | undefined): Column {
  let err = inherited(n, args, what);
  const out = new Float64Array(n);
  const columns = args.map((a) => a.num!);
  const v = new Float64Array(args.length);
  for (let i = 0; i < n; i++) {
    if (err !== null && err[i] !== undefined) continue;
    for (let k = 0; k < columns.length; k++) v[k] = columns[k][i];
    const problem = check?.(v);
    const r = problem === undefined ? f(v) : NaN;
    const found = problem ?? problemOf(r);
    if (found !== undefined) (err ??= new Array(n))[i] = found;
    else out[i] = r;
  }
  return { num: out, str: null, err };
}

const BINARY: Record<'+' | '-' | '*' | '/', (a: number, b: number) => number> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
};

/** Rounding half away from zero to `d` decimals (negative: to tens, hundreds, ...). */
function round(x: number, d: number): number {
  const f = 10 ** d;
  return (Math.sign(x) * Math.round(Math.abs(x) * f)) / f;
}

const FUNCTIONS: Record<Exclude<FunctionName, 'on_error' | 'map' | 'pi'>, { f: (v: Float64Array) => number; check?: (v: Float64Array) => string | undefined }> = {
  sin: { f: (v) => Math.sin(v[0]) },
  cos: { f: (v) => Math.cos(v[0]) },
  ln: { f: (v) => Math.log(v[0]), check: (v) => (v[0] > 0 ? undefined : ERRORS.logarithm) },
  sqrt: { f: (v) => Math.sqrt(v[0]), check: (v) => (v[0] >= 0 ? undefined : ERRORS.negativeRoot) },
  exp: { f: (v) => Math.exp(v[0]) },
  abs: { f: (v) => Math.abs(v[0]) },
  pow: { f: (v) => Math.pow(v[0], v[1]), check: (v) => (v[0] === 0 && v[1] < 0 ? ERRORS.divisionByZero : undefined) },
  round: { f: (v) => round(v[0], v[1]), check: (v) => (Number.isInteger(v[1]) && Math.abs(v[1]) < 10 ? undefined : ERRORS.decimals) },
  max: { f: (v) => Math.max(...v) },
  min: { f: (v) => Math.min(...v) },
  sum: { f: (v) => v.reduce((a, b) => a + b, 0) },
  avg: { f: (v) => v.reduce((a, b) => a + b, 0) / v.length },
};

/** `on_error(value, fallback)`: the value, or where it is an error (a string included), the fallback. */
function onError(n: number, value: Column, fallback: Column): Column {
  const fb = inherited(n, [fallback], 'on_error');
  const out = new Float64Array(n);
  let err: Array<string | undefined> | null = null;
  for (let i = 0; i < n; i++) {
    if (value.num !== null && (value.err === null || value.err[i] === undefined)) {
      out[i] = value.num[i];
    } else if (fb !== null && fb[i] !== undefined) {
      (err ??= new Array(n))[i] = fb[i];
    } else {
      out[i] = fallback.num![i];
    }
  }
  return { num: out, str: null, err };
}

/** `map(value, from, to, fallback)`: the number `to` gives for the value's place in `from`, or the fallback. */
function mapValues(n: number, value: Column, from: ReadonlyArray<string | number>, to: readonly number[], fallback: Column): Column {
  const table = new Map<string | number, number>();
  from.forEach((key, k) => table.has(key) || table.set(key, to[k]));
  let err = inherited(n, [fallback], 'map');
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const own = value.err?.[i];
    if (own !== undefined) {
      (err ??= new Array(n))[i] = own;
      continue;
    }
    const found = table.get(value.str !== null ? value.str[i] : value.num![i]);
    if (found !== undefined) {
      if (err !== null) err[i] = undefined;
      out[i] = found;
    } else if (err === null || err[i] === undefined) {
      out[i] = fallback.num![i];
    }
  }
  return { num: out, str: null, err };
}

/** The nodes a node is computed from, in the order `computed` takes their columns. */
function operands(node: Node): Node[] {
  switch (node.kind) {
    case 'number':
    case 'series':
      return [];
    case 'negate':
      return [node.arg];
    case 'binary':
      return [node.left, node.right];
    case 'map':
      return [node.arg, node.fallback];
    case 'call':
      return node.args;
  }
}

/** A node's column, from its operands' columns. */
function computed(node: Node, args: readonly Column[], inputs: readonly Column[], n: number): Column {
  switch (node.kind) {
    case 'number':
      return constant(n, node.value);
    case 'series':
      return inputs[node.input];
    case 'negate':
      return pointwise(n, args, '-', (v) => -v[0]);
    case 'binary': {
      const op = BINARY[node.op];
      const check = node.op === '/' ? (v: Float64Array) => (v[1] === 0 ? ERRORS.divisionByZero : undefined) : undefined;
      return pointwise(n, args, node.op, (v) => op(v[0], v[1]), check);
    }
    case 'map':
      return mapValues(n, args[0], node.from, node.to, args[1]);
    case 'call': {
      if (node.name === 'pi') return constant(n, Math.PI);
      if (node.name === 'on_error') return onError(n, args[0], args[1]);
      const { f, check } = FUNCTIONS[node.name as keyof typeof FUNCTIONS];
      return pointwise(n, args, node.name, f, check);
    }
  }
}

/**
 * The value of the expression at `n` points, its inputs' columns given there: numbers, or errors. The tree
 * is walked with a stack of its own (a long chain of operators is as deep as it is long), and the event
 * loop gets its turns between nodes (storage/event-loop.ts), so a large computation does not hold up other
 * requests.
 */
export async function evaluate(root: Node, inputs: readonly Column[], n: number): Promise<Column> {
  const stack: Array<{ node: Node; operands: Node[]; args: Column[] }> = [{ node: root, operands: operands(root), args: [] }];
  let out: Column | undefined;
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (top.args.length < top.operands.length) {
      const next = top.operands[top.args.length];
      stack.push({ node: next, operands: operands(next), args: [] });
      continue;
    }
    stack.pop();
    await pause();
    const column = computed(top.node, top.args, inputs, n);
    if (stack.length) stack[stack.length - 1].args.push(column);
    else out = column;
  }
  if (out!.str === null) return out!;
  return { num: new Float64Array(n), str: null, err: Array.from({ length: n }, (_, i) => out!.err?.[i] ?? ERRORS.stringResult) };
}
