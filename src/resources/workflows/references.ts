/**
 * References in task parameters, resolved when a task is scheduled: `${workflow.input.a.b}` reads the
 * execution's input, `${task.output.x}` and `${task.input.x}` an earlier task's. A string that is one
 * reference becomes the value it names (any JSON); references inside a longer string are written into it.
 */

/** A reference that names nothing: the task fails with this message. */
export class UnresolvedReference extends Error {
  override readonly name = 'UnresolvedReference';
}

export interface ReferenceContext {
  workflowInput: unknown;
  task(externalId: string): { input: unknown; output: unknown } | undefined;
}

const WHOLE = /^\$\{([^}]+)\}$/;
const INSIDE = /\$\{([^}]+)\}/g;

function lookup(expression: string, ctx: ReferenceContext): unknown {
  const [head, part, ...path] = expression.trim().split('.');
  let value: unknown;
  if (head === 'workflow' && part === 'input') value = ctx.workflowInput ?? {};
  else if (part === 'input' || part === 'output') {
    const task = ctx.task(head);
    if (!task) throw new UnresolvedReference(`the reference \${${expression}} names the task "${head}", which has not run in this execution`);
    value = task[part];
  } else throw new UnresolvedReference(`the reference \${${expression}} is not of the form \${workflow.input.<key>} or \${<task>.output.<key>} or \${<task>.input.<key>}`);
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !(key in value)) throw new UnresolvedReference(`the reference \${${expression}} names "${key}", which is not there`);
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

export function resolveReferences(value: unknown, ctx: ReferenceContext): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return lookup(whole[1], ctx);
    return value.replace(INSIDE, (_, expression: string) => {
      const found = lookup(expression, ctx);
      return typeof found === 'string' ? found : JSON.stringify(found);
    });
  }
  if (Array.isArray(value)) return value.map((v) => resolveReferences(v, ctx));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveReferences(v, ctx)]));
  return value;
}
