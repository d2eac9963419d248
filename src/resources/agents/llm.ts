/**
 * The language model behind agents, the document tools and the OpenAI-compatible routes: one interface,
 * two kinds. Any OpenAI-compatible chat-completions endpoint (`STRATA_LLM_URL`, called through the app's
 * outbound client, so its deadline, size limit and address policy hold), or a scripted model
 * (`STRATA_LLM_URL=script:FILE`): a YAML file of message patterns and the answers or tool calls to give,
 * for deterministic tests of applications that use agents. Without either, nothing answers: the routes
 * that need a model answer 503 naming the settings.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError, type ConfigSection } from '../../config.js';
import { ApiError } from '../../http/errors.js';
import { OutboundError, type OutboundClient } from '../../http/outbound.js';
import type { Services } from '../../http/services.js';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

export interface FunctionSpec {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface CompletionRequest {
  messages: ChatMessage[];
  tools?: FunctionSpec[];
  /** The model to ask for when the settings name none (an agent's `model`). */
  model?: string;
}

/** What a completion says: text, tool calls, or both. */
export interface Completion {
  content: string | null;
  toolCalls: ToolCall[];
}

export interface LanguageModel {
  /** How messages name the model (its URL, or the script's file). */
  readonly describe: string;
  complete(request: CompletionRequest): Promise<Completion>;
  /** `POST /chat/completions` with the body as given; the endpoint's JSON answer as it is. */
  chatCompletions(body: Record<string, unknown>): Promise<unknown>;
  /** `GET /models`: the endpoint's JSON answer as it is. */
  models(): Promise<unknown>;
}

export interface LlmSettings {
  url?: string;
  apiKey?: string;
  model?: string;
  /** The rules of a scripted model (`script:FILE`), read when the settings are loaded. */
  script?: { file: string; rules: ScriptRule[] };
}

/**
 * One rule of a scripted model: when the last message of the conversation (a user's message, or a tool's
 * result) matches `match` (a regular expression; any message when absent), and its role is `role` when
 * given, the model answers `answer`, calls `toolCalls`, or both. The first matching rule wins.
 */
export interface ScriptRule {
  match?: RegExp;
  role?: 'user' | 'tool';
  answer?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

export const LLM_SETTINGS_NAMES = 'STRATA_LLM_URL (an OpenAI-compatible endpoint such as http://localhost:11434/v1, or script:FILE for a scripted model), and STRATA_LLM_MODEL and STRATA_LLM_API_KEY if it needs them';

export const LLM_SETTINGS: ConfigSection<LlmSettings> = {
  name: 'language model',
  settings: [
    { flag: '--llm-url', env: 'STRATA_LLM_URL', shown: 'none (agents answer 503)', meaning: 'OpenAI-compatible endpoint of the language model (its /chat/completions is called), or script:FILE for a scripted model' },
    { flag: '--llm-model', env: 'STRATA_LLM_MODEL', shown: 'none', meaning: "model name sent to the endpoint when an agent names none" },
    { env: 'STRATA_LLM_API_KEY', shown: 'none', meaning: 'bearer token sent to the language model endpoint' },
  ],
  load(text, name) {
    const url = nonEmpty(text('STRATA_LLM_URL'));
    const settings: LlmSettings = { url, apiKey: nonEmpty(text('STRATA_LLM_API_KEY')), model: nonEmpty(text('STRATA_LLM_MODEL')) };
    if (url?.startsWith('script:')) return { ...settings, script: loadScript(url.slice('script:'.length), name('STRATA_LLM_URL')) };
    if (url !== undefined && !/^https?:\/\//.test(url)) throw new ConfigError(`${name('STRATA_LLM_URL')}: expected an http or https URL, or script:FILE`);
    return settings;
  },
};

const nonEmpty = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

function loadScript(file: string, where: string): { file: string; rules: ScriptRule[] } {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${where}: the script ${file} cannot be read: ${(err as Error).message}`);
  }
  const rules = (doc as { rules?: unknown } | null)?.rules;
  if (!Array.isArray(rules)) throw new ConfigError(`${where}: the script ${file} must be a mapping with a list "rules"`);
  return {
    file,
    rules: rules.map((raw, i) => {
      const at = `${where}: ${file} rules[${i}]`;
      const r = raw as Record<string, unknown>;
      if (typeof r !== 'object' || r === null) throw new ConfigError(`${at}: expected a mapping`);
      const unknown = Object.keys(r).filter((k) => !['match', 'role', 'answer', 'toolCalls'].includes(k));
      if (unknown.length) throw new ConfigError(`${at}: unknown key "${unknown[0]}"; expected match, role, answer, toolCalls`);
      if (r.answer === undefined && r.toolCalls === undefined) throw new ConfigError(`${at}: give an answer, toolCalls, or both`);
      if (r.role !== undefined && r.role !== 'user' && r.role !== 'tool') throw new ConfigError(`${at}.role: expected user or tool`);
      if (r.answer !== undefined && typeof r.answer !== 'string') throw new ConfigError(`${at}.answer: expected text`);
      let match: RegExp | undefined;
      if (r.match !== undefined) {
        try {
          match = new RegExp(String(r.match), 'i');
        } catch (err) {
          throw new ConfigError(`${at}.match: ${(err as Error).message}`);
        }
      }
      const calls = r.toolCalls ?? [];
      if (!Array.isArray(calls)) throw new ConfigError(`${at}.toolCalls: expected a list`);
      const toolCalls = calls.map((c: { name?: unknown; arguments?: unknown }, k) => {
        if (typeof c?.name !== 'string') throw new ConfigError(`${at}.toolCalls[${k}].name: expected the name of a tool`);
        if (c.arguments !== undefined && (typeof c.arguments !== 'object' || c.arguments === null)) throw new ConfigError(`${at}.toolCalls[${k}].arguments: expected a mapping`);
        return { name: c.name, arguments: (c.arguments ?? {}) as Record<string, unknown> };
      });
      return { match, role: r.role as ScriptRule['role'], answer: r.answer as string | undefined, toolCalls: toolCalls.length ? toolCalls : undefined };
    }),
  };
}

/** A failure of the model: the endpoint failed or answered something else than a completion (502). */
const modelFailed = (message: string) => new ApiError(502, `The language model failed: ${message}`);

/** The configured model of the request's app: a 503 naming the settings when there is none. */
export function languageModel(services: Pick<Services, 'settings' | 'outbound'>): LanguageModel {
  const settings = services.settings.of(LLM_SETTINGS);
  if (settings.script) return scriptedModel(settings.script);
  if (settings.url && services.outbound) return endpointModel(settings, services.outbound);
  throw new ApiError(503, `No language model is configured for this server: set ${LLM_SETTINGS_NAMES}`);
}

function endpointModel(settings: LlmSettings, outbound: OutboundClient): LanguageModel {
  const base = settings.url!.replace(/\/+$/, '');
  const headers: Record<string, string> = { accept: 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) };

  async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    let res;
    try {
      res = await outbound.request(`${base}${path}`, 'the language model', {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      if (err instanceof OutboundError) throw modelFailed(err.message);
      throw err;
    }
    if (res.status < 200 || res.status >= 300) throw modelFailed(`${base}${path} answered HTTP ${res.status}`);
    try {
      return JSON.parse(res.body.toString('utf8'));
    } catch {
      throw modelFailed(`${base}${path} answered with something other than JSON`);
    }
  }

  return {
    describe: base,
    async complete(request) {
      const body = {
        model: settings.model ?? request.model,
        messages: request.messages,
        ...(request.tools?.length ? { tools: request.tools } : {}),
      };
      const answer = (await call('POST', '/chat/completions', body)) as { choices?: Array<{ message?: { content?: unknown; tool_calls?: unknown } }> };
      const message = answer?.choices?.[0]?.message;
      if (!message) throw modelFailed(`${base}/chat/completions answered without choices[0].message`);
      return { content: typeof message.content === 'string' ? message.content : null, toolCalls: toolCallsOf(message.tool_calls) };
    },
    chatCompletions: (body) => call('POST', '/chat/completions', { ...body, model: body.model ?? settings.model }),
    models: () => call('GET', '/models'),
  };
}

function toolCallsOf(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((c: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }, i) =>
    typeof c?.function?.name === 'string'
      ? [{ id: typeof c.id === 'string' ? c.id : `call_${i}`, type: 'function' as const, function: { name: c.function.name, arguments: typeof c.function.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function.arguments ?? {}) } }]
      : [],
  );
}

function scriptedModel(script: { file: string; rules: ScriptRule[] }): LanguageModel {
  let calls = 0;
  function complete(request: CompletionRequest): Completion {
    const last = request.messages[request.messages.length - 1];
    const text = last?.content ?? '';
    const rule = script.rules.find((r) => (r.role === undefined || r.role === last?.role) && (r.match === undefined || r.match.test(text)));
    if (!rule) throw modelFailed(`the scripted model (${script.file}) has no rule matching the ${last?.role ?? 'empty'} message ${JSON.stringify(text.slice(0, 200))}`);
    return {
      content: rule.answer ?? null,
      toolCalls: (rule.toolCalls ?? []).map((c) => ({ id: `call_${++calls}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
    };
  }
  return {
    describe: `script:${script.file}`,
    complete: async (request) => complete(request),
    async chatCompletions(body) {
      const answer = complete({ messages: (body.messages ?? []) as ChatMessage[] });
      const message = { role: 'assistant', content: answer.content, ...(answer.toolCalls.length ? { tool_calls: answer.toolCalls } : {}) };
      return { object: 'chat.completion', model: `script:${script.file}`, choices: [{ index: 0, message, finish_reason: answer.toolCalls.length ? 'tool_calls' : 'stop' }] };
    },
    models: async () => ({ object: 'list', data: [{ id: `script:${script.file}`, object: 'model', owned_by: 'strata' }] }),
  };
}
