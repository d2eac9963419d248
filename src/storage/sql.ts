/**
 * A small parameterised SQL fragment builder. Fragments carry their own parameters, so filters, sort keys
 * and keyset conditions can be composed without string-concatenating user input.
 */
export type SqlValue = string | number | bigint | null | Buffer;

export class Sql {
  constructor(
    readonly text: string,
    readonly params: readonly SqlValue[] = [],
  ) {}

  static raw(text: string): Sql {
    return new Sql(text);
  }

  static join(parts: readonly Sql[], separator: string): Sql {
    return new Sql(
      parts.map((p) => p.text).join(separator),
      parts.flatMap((p) => p.params),
    );
  }

  /** AND of the parts; an empty list is TRUE. */
  static and(parts: readonly Sql[]): Sql {
    if (parts.length === 0) return TRUE;
    if (parts.length === 1) return parts[0];
    return balanced(parts.map((p) => p.wrap()), ' AND ');
  }

  /** OR of the parts; an empty list is FALSE. */
  static or(parts: readonly Sql[]): Sql {
    if (parts.length === 0) return FALSE;
    if (parts.length === 1) return parts[0];
    return balanced(parts.map((p) => p.wrap()), ' OR ');
  }

  wrap(): Sql {
    return new Sql(`(${this.text})`, this.params);
  }
}

/** Operands an AND or OR lists flat; longer lists are halved into parenthesised groups. */
const FLAT = 8;

/**
 * `a OR b OR c ...` parses into a chain as deep as the list is long, and SQLite refuses an expression nested
 * more than 1000 deep: a long list is grouped in halves, as deep as the logarithm of its length.
 */
function balanced(parts: readonly Sql[], operator: string): Sql {
  if (parts.length <= FLAT) return Sql.join(parts, operator);
  const half = Math.ceil(parts.length / 2);
  return Sql.join([balanced(parts.slice(0, half), operator).wrap(), balanced(parts.slice(half), operator).wrap()], operator);
}

export const TRUE = new Sql('TRUE');
export const FALSE = new Sql('FALSE');

/** Tagged template: values become `?` parameters (a list becomes a list of them), nested `Sql` fragments are spliced in. */
export function sql(strings: TemplateStringsArray, ...values: Array<SqlValue | Sql | readonly SqlValue[]>): Sql {
  let text = strings[0];
  const params: SqlValue[] = [];
  values.forEach((v, i) => {
    if (v instanceof Sql) {
      text += v.text;
      params.push(...v.params);
    } else if (Array.isArray(v)) {
      // An empty list is NULL, so that `x IN (...)` matches nothing on every engine (PostgreSQL refuses
      // `IN ()`). Lists are for IN only: under NOT IN an empty one would match nothing too.
      text += v.length === 0 ? 'NULL' : v.map(() => '?').join(', ');
      params.push(...v);
    } else {
      text += '?';
      params.push(v as SqlValue);
    }
    text += strings[i + 1];
  });
  return new Sql(text, params);
}

/** A text as it matches itself in a LIKE pattern with `ESCAPE '\'`: its `%`, `_` and `\` escaped. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (m) => `\\${m}`);
}
