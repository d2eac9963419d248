/**
 * The rules of a task graph, for a version's definition and for the tasks a dynamic task or subworkflow
 * produces at run time: external ids unique and not reserved, dependencies on tasks of the same graph, no
 * cycle, and each type's parameters. A refusal names the task and what is wrong with it.
 */
import { Value } from '@sinclair/typebox/value';
import { TaskDefinition, type TaskType } from './schema.js';
import { isObject } from '../../http/validation.js';

const REFERENCE = /^\$\{[^}]+\}$/;
const isReference = (v: unknown) => typeof v === 'string' && REFERENCE.test(v);
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

type Check = (p: Record<string, unknown>, nested: boolean) => string | undefined;

function only(obj: Record<string, unknown>, allowed: readonly string[], where: string): string | undefined {
  const extra = Object.keys(obj).find((k) => !allowed.includes(k));
  return extra === undefined ? undefined : `${where}${extra} is not a parameter of this task type (allowed: ${allowed.join(', ')})`;
}

function stringOrReference(v: unknown, where: string): string | undefined {
  return typeof v === 'string' && v.length > 0 ? undefined : `${where} must be a non-empty string or a reference such as \${workflow.input.x}`;
}

const PARAMETERS: Record<TaskType, Check> = {
  function(p) {
    const f = p.function;
    if (!isObject(f)) return 'parameters.function must be an object with the externalId of a function';
    if (p.isAsyncComplete !== undefined && typeof p.isAsyncComplete !== 'boolean') return 'parameters.isAsyncComplete must be a boolean';
    const data = f.data;
    if (data !== undefined && data !== null && !isObject(data) && !isReference(data)) return 'parameters.function.data must be an object or a reference';
    return only(p, ['function', 'isAsyncComplete'], 'parameters.') ?? only(f, ['externalId', 'data'], 'parameters.function.') ?? stringOrReference(f.externalId, 'parameters.function.externalId');
  },
  transformation(p) {
    const t = p.transformation;
    if (!isObject(t)) return 'parameters.transformation must be an object with the externalId of a transformation';
    const policy = t.concurrencyPolicy;
    if (policy !== undefined && !['fail', 'waitForCurrent', 'restartAfterCurrent'].includes(policy as string))
      return 'parameters.transformation.concurrencyPolicy must be fail, waitForCurrent or restartAfterCurrent';
    if (t.useTransformationCredentials !== undefined && typeof t.useTransformationCredentials !== 'boolean') return 'parameters.transformation.useTransformationCredentials must be a boolean';
    return (
      only(p, ['transformation'], 'parameters.') ??
      only(t, ['externalId', 'concurrencyPolicy', 'useTransformationCredentials'], 'parameters.transformation.') ??
      stringOrReference(t.externalId, 'parameters.transformation.externalId')
    );
  },
  cdf(p) {
    const r = p.cdfRequest;
    if (!isObject(r)) return 'parameters.cdfRequest must be an object with resourcePath and method';
    const bad =
      only(p, ['cdfRequest'], 'parameters.') ??
      only(r, ['resourcePath', 'method', 'queryParameters', 'body', 'requestTimeoutInMillis', 'cdfVersionHeader'], 'parameters.cdfRequest.') ??
      stringOrReference(r.resourcePath, 'parameters.cdfRequest.resourcePath');
    if (bad) return bad;
    if (typeof r.method !== 'string' || !(METHODS.includes(r.method.toUpperCase()) || isReference(r.method)))
      return `parameters.cdfRequest.method must be one of ${METHODS.join(', ')} or a reference`;
    if (r.queryParameters !== undefined && !isObject(r.queryParameters) && !isReference(r.queryParameters)) return 'parameters.cdfRequest.queryParameters must be an object or a reference';
    const timeout = r.requestTimeoutInMillis;
    if (timeout !== undefined && !(typeof timeout === 'number' && timeout >= 100) && !isReference(timeout)) return 'parameters.cdfRequest.requestTimeoutInMillis must be a number of at least 100 or a reference';
    if (r.cdfVersionHeader !== undefined && r.cdfVersionHeader !== 'alpha' && r.cdfVersionHeader !== 'beta') return 'parameters.cdfRequest.cdfVersionHeader must be alpha or beta';
    return undefined;
  },
  dynamic(p, nested) {
    if (nested) return 'a dynamic task cannot be run by a dynamic task or a subworkflow';
    const d = p.dynamic;
    if (!isObject(d)) return 'parameters.dynamic must be an object with tasks';
    return only(p, ['dynamic'], 'parameters.') ?? only(d, ['tasks'], 'parameters.dynamic.') ?? (isReference(d.tasks) ? undefined : 'parameters.dynamic.tasks must be a reference to a list of task definitions, such as ${previousTask.output.tasks}');
  },
  subworkflow(p, nested) {
    if (nested) return 'a subworkflow cannot be run by a dynamic task or a subworkflow';
    const s = p.subworkflow;
    if (!isObject(s)) return 'parameters.subworkflow must be an object with tasks, or with workflowExternalId and version';
    const bad = only(p, ['subworkflow'], 'parameters.');
    if (bad) return bad;
    if ('tasks' in s) {
      if (!Array.isArray(s.tasks) || s.tasks.length === 0 || s.tasks.length > 100) return 'parameters.subworkflow.tasks must be a list of 1 to 100 task definitions';
      const inner = taskListProblem(s.tasks);
      return inner ? `parameters.subworkflow.${inner}` : only(s, ['tasks'], 'parameters.subworkflow.');
    }
    return (
      only(s, ['workflowExternalId', 'version'], 'parameters.subworkflow.') ??
      stringOrReference(s.workflowExternalId, 'parameters.subworkflow.workflowExternalId') ??
      stringOrReference(s.version, 'parameters.subworkflow.version')
    );
  },
  simulation(p) {
    const s = p.simulation;
    if (!isObject(s)) return 'parameters.simulation must be an object with routineExternalId';
    if (s.inputs !== undefined && !Array.isArray(s.inputs)) return 'parameters.simulation.inputs must be a list';
    return only(p, ['simulation'], 'parameters.') ?? only(s, ['routineExternalId', 'runTime', 'inputs'], 'parameters.simulation.') ?? stringOrReference(s.routineExternalId, 'parameters.simulation.routineExternalId');
  },
};

/** The first rule `tasks` break, as a message naming the task; undefined when they keep them all. */
export function graphProblem(tasks: readonly TaskDefinition[], nested: boolean): string | undefined {
  const index = new Map<string, number>();
  for (const [i, task] of tasks.entries()) {
    const name = `tasks[${i}] (task "${task.externalId}")`;
    if (task.externalId === 'workflow' || task.externalId.startsWith('__')) return `${name}: the external id "workflow" and ids starting with "__" are reserved`;
    if (index.has(task.externalId)) return `${name}: the external id "${task.externalId}" is also the id of tasks[${index.get(task.externalId)}]; task external ids must be unique`;
    index.set(task.externalId, i);
    const problem = PARAMETERS[task.type](task.parameters, nested);
    if (problem) return `${name}: ${problem}`;
  }
  for (const [i, task] of tasks.entries()) {
    const seen = new Set<string>();
    for (const dep of task.dependsOn ?? []) {
      if (!index.has(dep.externalId)) return `tasks[${i}] (task "${task.externalId}"): dependsOn names "${dep.externalId}", which is not a task of this workflow`;
      if (dep.externalId === task.externalId) return `tasks[${i}] (task "${task.externalId}"): a task cannot depend on itself`;
      if (seen.has(dep.externalId)) return `tasks[${i}] (task "${task.externalId}"): dependsOn names "${dep.externalId}" more than once`;
      seen.add(dep.externalId);
    }
  }
  const cycle = findCycle(tasks);
  return cycle ? `the dependencies form a cycle: ${cycle.map((t) => `"${t}"`).join(' -> ')}` : undefined;
}

/** A cycle of dependencies, as the task ids along it (the first repeated at the end), if there is one. */
function findCycle(tasks: readonly TaskDefinition[]): string[] | undefined {
  const deps = new Map(tasks.map((t) => [t.externalId, (t.dependsOn ?? []).map((d) => d.externalId)]));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'open') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'open');
    path.push(id);
    for (const next of deps.get(id) ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const t of tasks) {
    const found = visit(t.externalId);
    if (found) return found;
  }
  return undefined;
}

/** The first problem of a list of task definitions made at run time or inside a subworkflow: their shape, then the graph's rules. */
export function taskListProblem(tasks: unknown): string | undefined {
  if (!Array.isArray(tasks) || tasks.length > 100) return 'tasks must be a list of at most 100 task definitions';
  for (const [i, task] of tasks.entries()) {
    const error = Value.Errors(TaskDefinition, task).First();
    if (error) return `tasks[${i}]${error.path.replaceAll('/', '.')}: ${error.message}`;
  }
  return graphProblem(tasks as TaskDefinition[], true);
}
