/**
 * What an agent's tools do when the model calls them: each kind Strata runs becomes a call of this API's
 * own routes (self-calls.ts) with the caller's credential, so a tool reaches exactly what the caller may
 * and nothing more. What the model sees of each tool (its parameters) is declared here beside it.
 */
import type { Credential, SelfCaller, SelfResponse } from '../../http/self-calls.js';
import type { FunctionSpec } from './llm.js';
import type { AgentTool, ToolKind } from './model.js';

/** A tool result as the model reads it, cut to this many characters. */
const RESULT_CHARS = 20_000;

export interface ToolRun {
  /** What the tool was given and what came back, as the chat's reasoning shows it. */
  input: Record<string, unknown>;
  result: { status?: number; result?: unknown; error?: string };
  /** Instances the tool returned, for the answer's `data`. */
  nodes?: Array<{ space: string; externalId: string }>;
}

interface Caller {
  api: SelfCaller;
  project: string;
  credential: Credential;
}

const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });
const ViewParam = object({ space: { type: 'string' }, externalId: { type: 'string' }, version: { type: 'string' } }, ['space', 'externalId', 'version']);

type Runner = (args: Record<string, unknown>, tool: AgentTool, caller: Caller) => Promise<SelfResponse>;

const call = (caller: Caller, method: 'GET' | 'POST', path: string, body?: unknown) => caller.api.call({ project: caller.project, credential: caller.credential, method, path, body });

const knowledgeGraph: { parameters: Record<string, unknown>; run: Runner } = {
  parameters: object(
    {
      view: ViewParam,
      query: { type: 'string', description: 'free text to search for; absent to list' },
      filter: { type: 'object', description: 'a data modeling filter' },
      limit: { type: 'integer', minimum: 1, maximum: 1000 },
    },
    ['view'],
  ),
  run: async (args, tool, caller) => {
    const { view, query, filter: given, limit } = args as { view?: { space?: unknown; externalId?: unknown }; query?: string; filter?: unknown; limit?: number };
    const scope = graphScope(tool);
    if (scope.views && !scope.views.some((v) => v.space === view?.space && v.externalId === view?.externalId)) {
      const named = scope.views.map((v) => `${v.space}:${v.externalId}`).join(', ');
      return { status: 400, body: { error: { code: 400, message: `view: the tool queries the views ${named} only` } }, headers: {} };
    }
    const spaces = scope.spaces && { in: { property: ['node', 'space'], values: scope.spaces } };
    const filter = given && spaces ? { and: [given, spaces] } : (given ?? spaces);
    if (typeof query === 'string' && query !== '') return call(caller, 'POST', '/models/instances/search', { view, query, ...(filter ? { filter } : {}), limit: limit ?? 100 });
    return call(caller, 'POST', '/models/instances/list', { instanceType: 'node', sources: [{ source: { type: 'view', ...view } }], ...(filter ? { filter } : {}), limit: limit ?? 100 });
  },
};

/**
 * What a knowledge graph tool's configuration holds it to: the views its data models name (`viewExternalIds`;
 * any view when a data model names none), and the instance spaces when they are listed (`manual`).
 */
function graphScope(tool: AgentTool): { views?: Array<{ space: string; externalId: string }>; spaces?: string[] } {
  const c = (tool.configuration ?? {}) as { dataModels?: unknown; instanceSpaces?: { type?: unknown; spaces?: unknown } };
  const models = Array.isArray(c.dataModels) ? (c.dataModels as Array<{ space?: unknown; viewExternalIds?: unknown }>) : [];
  const named = models.length > 0 && models.every((m) => typeof m.space === 'string' && Array.isArray(m.viewExternalIds));
  const views = named ? models.flatMap((m) => (m.viewExternalIds as unknown[]).map((externalId) => ({ space: m.space as string, externalId: String(externalId) }))) : undefined;
  const manual = c.instanceSpaces?.type === 'manual' && Array.isArray(c.instanceSpaces.spaces);
  return { views, spaces: manual ? (c.instanceSpaces!.spaces as unknown[]).map(String) : undefined };
}

/** The kinds Strata runs, each with the parameters the model is told to give. */
const RUNNERS: Partial<Record<ToolKind, { parameters: Record<string, unknown>; run: Runner }>> = {
  queryKnowledgeGraph: knowledgeGraph,
  query: knowledgeGraph,
  queryTimeSeriesDatapoints: {
    parameters: object({ items: { type: 'array', description: 'as in POST /timeseries/data/list: {externalId|id|instanceId, start, end, aggregates, granularity, limit}', items: { type: 'object' } } }, ['items']),
    run: (args, _tool, caller) => call(caller, 'POST', '/timeseries/data/list', { items: args.items }),
  },
  askDocument: {
    parameters: object({ question: { type: 'string' }, fileIds: { type: 'array', items: { type: 'object' }, description: '[{id}|{externalId}|{instanceId}]' } }, ['question', 'fileIds']),
    run: (args, _tool, caller) => call(caller, 'POST', '/ai/tools/documents/ask', { question: args.question, fileIds: args.fileIds }),
  },
  summarizeDocument: {
    parameters: object({ items: { type: 'array', items: { type: 'object' }, description: '[{id}|{externalId}|{instanceId}]' } }, ['items']),
    run: (args, _tool, caller) => call(caller, 'POST', '/ai/tools/documents/summarize', { items: args.items }),
  },
  callRestApi: {
    parameters: object(
      { method: { type: 'string', enum: ['GET', 'POST'] }, path: { type: 'string', description: 'path under the project, such as /timeseries/list' }, body: { type: 'object' } },
      ['method', 'path'],
    ),
    run: async (args, _tool, caller) => {
      const path = String(args.path ?? '');
      // Only paths under the caller's project: no way out of it through `..` or an absolute address.
      if (!/^\/[A-Za-z0-9]/.test(path) || /(^|\/)\.\.?(\/|$|\?)|\/\/|%2e|\\/i.test(path)) {
        return { status: 400, body: { error: { code: 400, message: 'path: expected a path under the project, such as /timeseries/list' } }, headers: {} };
      }
      const method = args.method === 'POST' ? 'POST' : 'GET';
      return call(caller, method, path, method === 'POST' ? (args.body ?? {}) : undefined);
    },
  },
  callFunction: {
    parameters: object({ data: { type: 'object', description: 'the input of the function' } }),
    run: async (args, tool, caller) => {
      const externalId = (tool.configuration as { externalId?: unknown } | undefined)?.externalId;
      const found = await call(caller, 'POST', '/functions/byids', { items: [{ externalId }] });
      const id = (found.body as { items?: Array<{ id: number }> })?.items?.[0]?.id;
      if (found.status !== 200 || id === undefined) return found;
      return call(caller, 'POST', `/functions/${id}/call`, { data: args.data ?? {} });
    },
  },
};

/** Tool kinds that configuration must carry something for, and what. */
export function configurationProblem(tool: AgentTool): string | undefined {
  const c = tool.configuration as Record<string, unknown> | undefined;
  if (tool.type === 'queryKnowledgeGraph' && !Array.isArray(c?.dataModels)) return 'configuration.dataModels: a queryKnowledgeGraph tool needs the data models it queries';
  if (tool.type === 'callFunction' && typeof c?.externalId !== 'string') return 'configuration.externalId: a callFunction tool needs the external id of the function it calls';
  return undefined;
}

/** How the model is told of an agent's tool. */
export function functionSpec(tool: AgentTool): FunctionSpec {
  const runner = RUNNERS[tool.type as ToolKind];
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: runner?.parameters ?? object({}) } };
}

/** Runs the tool the model called, as the caller; failures come back as results the model reads. */
export async function runTool(tool: AgentTool, rawArguments: string, caller: Caller): Promise<ToolRun> {
  let input: Record<string, unknown>;
  try {
    const parsed = JSON.parse(rawArguments || '{}');
    input = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return { input: {}, result: { error: 'the arguments are not a JSON object' } };
  }
  const runner = RUNNERS[tool.type as ToolKind];
  if (!runner) return { input, result: { error: `Strata does not run tools of kind ${tool.type}` } };
  const res = await runner.run(input, tool, caller);
  if (res.status >= 400) {
    const message = (res.body as { error?: { message?: string } })?.error?.message ?? `HTTP ${res.status}`;
    return { input, result: { status: res.status, error: message } };
  }
  const nodes = tool.type === 'queryKnowledgeGraph' || tool.type === 'query' ? nodesOf(res.body) : undefined;
  return { input, result: { status: res.status, result: res.body }, ...(nodes?.length ? { nodes } : {}) };
}

function nodesOf(body: unknown): Array<{ space: string; externalId: string }> {
  const items = (body as { items?: Array<{ space?: unknown; externalId?: unknown }> })?.items ?? [];
  return items.flatMap((i) => (typeof i.space === 'string' && typeof i.externalId === 'string' ? [{ space: i.space, externalId: i.externalId }] : []));
}

/** A tool result as the text the model reads. */
export function resultText(result: unknown): string {
  const text = JSON.stringify(result);
  return text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)}… (cut at ${RESULT_CHARS} characters)` : text;
}
