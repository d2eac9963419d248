/**
 * Agents and their chat. An agent is written by create-or-update; its tools must be of the kinds the
 * official clients define (model.ts), each named once. A chat sends the conversation to the configured
 * language model with the agent's tools and the caller's client actions; the tools the model calls run as
 * the caller (tools.ts), the client actions go back to the caller to run, and the conversation is kept
 * under a cursor for the next turn (only its own principal may continue it).
 */
import { randomBytes } from 'node:crypto';
import { ApiError, badRequest, formatPath, notFound } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import type { Values } from '../../storage/items.js';
import { sql } from '../../storage/sql.js';
import type { TableDef } from '../../storage/schema.js';
import { fromModel, retrieveItems, upsertItems, type ResourceSpec } from '../crud.js';
import { languageModel, type ChatMessage, type FunctionSpec, type ToolCall } from './llm.js';
import { agentModel, TOOL_KINDS, type AgentTool } from './model.js';
import type { AgentUpsert, ChatBody, ClientToolAction } from './schema.js';
import { skillSpec } from './skills.js';
import { configurationProblem, functionSpec, resultText, runTool, type ToolRun } from './tools.js';

type Path = Array<string | number>;

/** The runtime version an agent gets when it names none. */
export const DEFAULT_RUNTIME_VERSION = '1.0.0';
/** Rounds of tool calls in one chat request before Strata gives up on an answer. */
const MAX_ROUNDS = 8;
/** A conversation not continued for this long is forgotten. */
export const CONVERSATION_TTL_MS = 30 * 86_400_000;
/** Characters of a conversation's messages (as JSON) that a chat may send the model and keep. */
export const MAX_CONVERSATION_CHARS = 1_000_000;

export function agentSpec(ownerId: string): ResourceSpec<AgentUpsert> {
  return {
    ...fromModel(agentModel),
    createValues: (item) => ({ runtimeVersion: item.runtimeVersion ?? DEFAULT_RUNTIME_VERSION, ownerId }),
    check(values: Values, path: Path) {
      const names = new Set<string>();
      for (const [i, tool] of ((values.tools as AgentTool[] | null) ?? []).entries()) {
        const at = [...path, 'tools', i];
        if (!(TOOL_KINDS as readonly string[]).includes(tool.type)) {
          throw badRequest(`${formatPath([...at, 'type'])}: unknown tool kind "${tool.type}"; expected one of ${TOOL_KINDS.join(', ')}`);
        }
        const problem = configurationProblem(tool);
        if (problem) throw badRequest(`${formatPath(at)}.${problem}`);
        if (names.has(tool.name)) throw badRequest(`${formatPath([...at, 'name'])}: the tool name "${tool.name}" is used twice in the agent`);
        names.add(tool.name);
      }
    },
    // An agent's conversations go with it: a new agent of the same external id starts afresh.
    async beforeDelete(ids, { db, projectId }) {
      if (ids.length === 0) return;
      await db.run(
        sql`DELETE FROM ai_conversations WHERE project_id = ${projectId} AND agent_external_id IN (SELECT external_id FROM ai_agents WHERE project_id = ${projectId} AND id IN (${ids}))`,
      );
    },
  };
}

export const readSpec = agentSpec('') as ResourceSpec<unknown>;

export function upsertAgents(services: Services, projectId: number, ownerId: string, items: readonly AgentUpsert[]) {
  return upsertItems(agentSpec(ownerId), services, projectId, items);
}

/** The conversations of agent chats, by cursor. */
export const conversationsTable: TableDef = {
  name: 'ai_conversations',
  columns: {
    project_id: { type: 'integer', notNull: true },
    cursor: { type: 'text', notNull: true },
    agent_external_id: { type: 'text', notNull: true },
    subject: { type: 'text', notNull: true },
    // The messages as the model reads them, and the ids of client actions the caller has yet to answer.
    messages: { type: 'text', notNull: true },
    pending: { type: 'text', notNull: true },
    last_updated_time: { type: 'integer', notNull: true },
  },
  primaryKey: ['project_id', 'cursor'],
  indexes: [{ name: 'ai_conversations_age', columns: ['project_id', 'last_updated_time'] }],
};

interface Conversation {
  cursor: string;
  messages: ChatMessage[];
  pending: string[];
}

interface ChatContext {
  services: Services;
  projectId: number;
  project: string;
  subject: string;
  token: string;
}

/** The agent a chat names: `agentExternalId`, or the deprecated `agentId`; both given, they must agree. */
function chatAgentId(body: ChatBody): string {
  const { agentExternalId, agentId } = body;
  if (agentExternalId !== undefined && agentId !== undefined && agentExternalId !== agentId) {
    throw badRequest(`agentId: "${agentId}" disagrees with agentExternalId "${agentExternalId}"; give agentExternalId alone (agentId is deprecated)`);
  }
  const id = agentExternalId ?? agentId;
  if (id === undefined) throw badRequest('agentExternalId: required (the external id of the agent to chat with)');
  return id;
}

async function loadConversation(ctx: ChatContext, cursor: string, agent: string): Promise<Conversation> {
  const row = await ctx.services.db.get<{ messages: string; pending: string; subject: string; agent_external_id: string; last_updated_time: number }>(
    sql`SELECT messages, pending, subject, agent_external_id, last_updated_time FROM ai_conversations WHERE project_id = ${ctx.projectId} AND cursor = ${cursor}`,
  );
  // Another principal's conversation, and an expired one, read as one that does not exist.
  if (!row || row.subject !== ctx.subject || Number(row.last_updated_time) <= ctx.services.now() - CONVERSATION_TTL_MS) throw badRequest(`cursor: there is no conversation "${cursor}" (a cursor continues a chat of its own principal)`);
  if (row.agent_external_id !== agent) throw badRequest(`cursor: the conversation "${cursor}" is with the agent "${row.agent_external_id}", not "${agent}"`);
  return { cursor, messages: JSON.parse(row.messages), pending: JSON.parse(row.pending) };
}

async function saveConversation(ctx: ChatContext, agent: string, c: Conversation): Promise<void> {
  const messages = JSON.stringify(c.messages);
  const pending = JSON.stringify(c.pending);
  const now = ctx.services.now();
  await ctx.services.db.run(sql`DELETE FROM ai_conversations WHERE project_id = ${ctx.projectId} AND last_updated_time <= ${now - CONVERSATION_TTL_MS}`);
  await ctx.services.db.run(
    sql`INSERT INTO ai_conversations (project_id, cursor, agent_external_id, subject, messages, pending, last_updated_time)
        VALUES (${ctx.projectId}, ${c.cursor}, ${agent}, ${ctx.subject}, ${messages}, ${pending}, ${now})
        ON CONFLICT (project_id, cursor) DO UPDATE SET messages = ${messages}, pending = ${pending}, last_updated_time = ${now}`,
  );
}

async function systemPrompt(ctx: ChatContext, agent: Record<string, unknown>): Promise<string> {
  const parts = [`You are the agent "${agent.name}" of the project "${ctx.project}".`];
  if (agent.description) parts.push(String(agent.description));
  if (agent.instructions) parts.push(`Instructions:\n${agent.instructions}`);
  const skillIds = (agent.skills as string[] | undefined) ?? [];
  if (skillIds.length) {
    const skills = await retrieveItems(skillSpec, ctx.services, ctx.projectId, skillIds.map((externalId) => ({ externalId })), true);
    for (const s of skills) parts.push(`Skill "${s.name}": ${s.description}${s.content ? `\n${s.content}` : ''}`);
  }
  return parts.join('\n\n');
}

/** The text of a user's message (images are named, not sent: the chat speaks text to the model). */
function messageText(content: unknown): string {
  const parts = Array.isArray(content) ? content : [content];
  return parts.map((p: { type: string; text?: string; mediaType?: string }) => (p.type === 'text' ? p.text : `[an image (${p.mediaType})]`)).join('\n');
}

/** Adds the request's messages to the conversation: action results answer pending client actions. */
function appendInputs(c: Conversation, body: ChatBody): void {
  for (const [i, m] of body.messages.entries()) {
    if (m.role === 'user') {
      // Actions the caller did not run are answered as not run, so the model sees every call answered.
      for (const id of c.pending) c.messages.push({ role: 'tool', tool_call_id: id, content: 'The client did not run this action.' });
      c.pending = [];
      c.messages.push({ role: 'user', content: messageText(m.content) });
      continue;
    }
    if (!c.pending.includes(m.actionId)) throw badRequest(`${formatPath(['messages', i, 'actionId'])}: the conversation has no pending action "${m.actionId}"`);
    c.pending = c.pending.filter((id) => id !== m.actionId);
    const content = m.type === 'clientTool' ? JSON.stringify({ content: m.content.text, ...(m.data?.length ? { data: m.data } : {}) }) : `The client answered ${m.status}.`;
    c.messages.push({ role: 'tool', tool_call_id: m.actionId, content });
  }
}

interface Reasoning {
  content: Array<{ type: 'text'; text: string }>;
  data: Array<{ type: 'toolCall'; toolCall: { id: string; name: string; toolType: string; input: Record<string, unknown>; result: ToolRun['result'] } }>;
}

export async function chat(ctx: ChatContext, body: ChatBody) {
  const agentId = chatAgentId(body);
  const actions: ClientToolAction[] = body.actions ?? [];
  const [agent] = await retrieveItems(readSpec, ctx.services, ctx.projectId, [{ externalId: agentId }], true);
  if (!agent) throw notFound(`agentExternalId: there is no agent "${agentId}"`);
  const model = languageModel(ctx.services);
  const tools = (agent.tools as AgentTool[] | undefined) ?? [];
  for (const [i, a] of actions.entries()) {
    if (tools.some((t) => t.name === a.clientTool.name)) throw badRequest(`${formatPath(['actions', i, 'clientTool', 'name'])}: "${a.clientTool.name}" is also the name of a tool of the agent`);
  }
  const conversation = body.cursor
    ? await loadConversation(ctx, body.cursor, agentId)
    : { cursor: randomBytes(18).toString('base64url'), messages: [{ role: 'system' as const, content: await systemPrompt(ctx, agent) }], pending: [] };
  appendInputs(conversation, body);
  if (JSON.stringify(conversation.messages).length > MAX_CONVERSATION_CHARS) {
    throw badRequest(
      `${body.cursor ? 'cursor' : 'messages'}: the conversation would hold more than ${MAX_CONVERSATION_CHARS} characters, the most a chat keeps; start a new one (without a cursor)`,
    );
  }

  const specs: FunctionSpec[] = [
    ...tools.map(functionSpec),
    ...actions.map((a) => ({ type: 'function' as const, function: { name: a.clientTool.name, description: a.clientTool.description, parameters: a.clientTool.parameters } })),
  ];
  const caller = { api: ctx.services.api!, project: ctx.project, credential: { token: ctx.token } };
  const reasoning: Reasoning[] = [];
  const nodes: Array<{ space: string; externalId: string }> = [];
  let answer: string | null = null;
  let clientCalls: ToolCall[] = [];
  for (let round = 0; ; round++) {
    if (round === MAX_ROUNDS) throw new ApiError(502, `The language model failed: it called tools ${MAX_ROUNDS} times in a row without answering`);
    const completion = await model.complete({ messages: conversation.messages, tools: specs, model: agent.model as string | undefined });
    conversation.messages.push({ role: 'assistant', content: completion.content, ...(completion.toolCalls.length ? { tool_calls: completion.toolCalls } : {}) });
    if (completion.toolCalls.length === 0) {
      answer = completion.content;
      break;
    }
    clientCalls = completion.toolCalls.filter((tc) => actions.some((a) => a.clientTool.name === tc.function.name));
    for (const tc of completion.toolCalls) {
      if (clientCalls.includes(tc)) continue;
      const tool = tools.find((t) => t.name === tc.function.name);
      const run: ToolRun = tool ? await runTool(tool, tc.function.arguments, caller) : { input: {}, result: { error: `there is no tool named "${tc.function.name}"` } };
      conversation.messages.push({ role: 'tool', tool_call_id: tc.id, content: resultText(run.result) });
      nodes.push(...(run.nodes ?? []));
      reasoning.push({
        content: [{ type: 'text', text: `Called the tool ${tc.function.name}${run.result.error ? ` (it failed: ${run.result.error})` : ''}` }],
        data: [{ type: 'toolCall', toolCall: { id: tc.id, name: tc.function.name, toolType: tool?.type ?? 'unknown', input: run.input, result: run.result } }],
      });
    }
    if (clientCalls.length) {
      answer = completion.content;
      break;
    }
  }
  conversation.pending = clientCalls.map((tc) => tc.id);
  await saveConversation(ctx, agentId, conversation);

  const message: Record<string, unknown> = { role: 'agent' };
  if (answer !== null) message.content = { type: 'text', text: answer };
  message.data = nodes.length ? [{ type: 'instances', instances: { nodes } }] : [];
  message.reasoning = reasoning;
  if (clientCalls.length) message.actions = clientCalls.map((tc) => ({ type: 'clientTool', actionId: tc.id, clientTool: { name: tc.function.name, arguments: tc.function.arguments } }));
  return { agentExternalId: agentId, response: { cursor: conversation.cursor, messages: [message], type: 'result' } };
}
