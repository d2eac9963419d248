/**
 * The agents area's operations: agents and their chat, skills (beta channel, as the official clients call
 * them), the OpenAI-compatible pass-through to the configured model (alpha channel), and the document
 * tools.
 */
import { Type } from '@sinclair/typebox';
import { unauthorized } from '../../http/errors.js';
import { route, type ApiRoute } from '../../http/route.js';
import { deleteItems, listItemsJson, retrieveItemsJson, type ResourceSpec } from '../crud.js';
import { Cursor, IgnoreUnknownIds, Limit } from '../../http/common-schemas.js';
import { askDocuments, summarizeDocuments } from './documents.js';
import { languageModel } from './llm.js';
import { agentModel, AGENT_LIMITS, SKILL_LIMITS, skillModel } from './model.js';
import {
  AgentIdsBody,
  AskDocumentsBody,
  ChatBody,
  CompletionsBody,
  CreateSkillsBody,
  SkillIdsBody,
  SkillParams,
  SkillUploadBody,
  SummarizeDocumentsBody,
  UpsertAgentsBody,
} from './schema.js';
import { chat, readSpec, upsertAgents } from './service.js';
import { createSkills, deleteSkills, downloadSkill, skillSpec, uploadSkillFiles } from './skills.js';

const agents = (action: 'READ' | 'WRITE' | 'RUN') => ({ acl: 'agentsAcl', action });
const beta = 'beta';
const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
const DeleteAgentsBody = Type.Object(
  { items: Type.Array(agentModel.refSchema, { minItems: 1, maxItems: AGENT_LIMITS.writeItems }), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);
const DeleteSkillsBody = Type.Object(
  { items: Type.Array(skillModel.refSchema, { minItems: 1, maxItems: SKILL_LIMITS.writeItems }), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);
const skills = skillSpec as ResourceSpec<unknown>;
// The toolkit writes skills with `overwrite=true`: create or replace.
const CreateSkillsQuery = Type.Object({ overwrite: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

/** The caller's bearer token: the agent's tools call the API with it, so they reach what the caller does. */
function bearerToken(authorization: string | undefined): string {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  if (!m) throw unauthorized('Agent chat needs the caller to authenticate with a bearer token: its tools run with it');
  return m[1];
}

const agentIds = (path: string, summary: string) =>
  route({
    method: 'POST',
    path,
    summary,
    capability: agents('READ'),
    channel: beta,
    body: AgentIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(readSpec, services, project.id, body.items, body.ignoreUnknownIds),
  });

export const agentRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/ai/agents',
    summary: 'Create or update agents',
    capability: agents('WRITE'),
    channel: beta,
    body: UpsertAgentsBody,
    handler: async ({ services, project, principal, body }) => ({ items: await upsertAgents(services, project.id, principal.subject, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/ai/agents',
    summary: 'List agents',
    capability: agents('READ'),
    channel: beta,
    query: ListQuery,
    handler: ({ services, project, query }) => listItemsJson(readSpec, services, project.id, { limit: query.limit ?? 1000, cursor: query.cursor }, undefined),
  }),
  agentIds('/ai/agents/byids', 'Retrieve agents by external id'),
  agentIds('/ai/agents/ids', 'Retrieve agents by external id (the address the spec names)'),
  route({
    method: 'POST',
    path: '/ai/agents/delete',
    summary: 'Delete agents',
    capability: agents('WRITE'),
    channel: beta,
    body: DeleteAgentsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(readSpec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/ai/agents/chat',
    summary: "Chat with an agent: its tools run with the caller's rights, client actions come back to the caller",
    capability: agents('RUN'),
    channel: beta,
    body: ChatBody,
    handler: ({ services, project, principal, headers, body }) =>
      chat({ services, projectId: project.id, project: project.name, subject: principal.subject, token: bearerToken(headers.authorization) }, body),
  }),
  route({
    method: 'POST',
    path: '/ai/skills',
    summary: 'Create skills',
    capability: agents('WRITE'),
    channel: beta,
    body: CreateSkillsBody,
    query: CreateSkillsQuery,
    status: 201,
    handler: async ({ services, project, body, query }) => ({ items: await createSkills(services, project.id, body.items, query.overwrite ?? false) }),
  }),
  route({
    method: 'GET',
    path: '/ai/skills',
    summary: 'List skills',
    capability: agents('READ'),
    channel: beta,
    query: ListQuery,
    handler: ({ services, project, query }) => listItemsJson(skills, services, project.id, { limit: query.limit ?? 1000, cursor: query.cursor }, undefined),
  }),
  route({
    method: 'POST',
    path: '/ai/skills/byids',
    summary: 'Retrieve skills by external id',
    capability: agents('READ'),
    channel: beta,
    body: SkillIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(skills, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/ai/skills/delete',
    summary: 'Delete skills, with their uploaded files',
    capability: agents('WRITE'),
    channel: beta,
    body: DeleteSkillsBody,
    handler: async ({ services, project, body }) => {
      await deleteSkills(services, project.id, body.items, body.ignoreUnknownIds ?? false);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/ai/skills/:skillExternalId/upload',
    summary: "Upload a skill's files as one bundle (base64), replacing any earlier upload",
    capability: agents('WRITE'),
    channel: beta,
    params: SkillParams,
    body: SkillUploadBody,
    handler: ({ services, project, params, body }) => uploadSkillFiles(services, project.id, params.skillExternalId, body.content, body.mimeType),
  }),
  route({
    method: 'GET',
    path: '/ai/skills/:skillExternalId/download',
    summary: "Download a skill's uploaded files (its SKILL.md content when none were uploaded)",
    capability: agents('READ'),
    channel: beta,
    params: SkillParams,
    handler: ({ services, project, params }) => downloadSkill(services, project.id, params.skillExternalId),
  }),
  route({
    method: 'POST',
    path: '/ai/openai/chat/completions',
    summary: 'OpenAI-compatible chat completions, answered by the configured language model',
    capability: agents('RUN'),
    channel: 'alpha',
    body: CompletionsBody,
    handler: ({ services, body }) => languageModel(services).chatCompletions(body),
  }),
  route({
    method: 'GET',
    path: '/ai/openai/models',
    summary: 'The models of the configured language model, as OpenAI lists them',
    capability: agents('RUN'),
    channel: 'alpha',
    handler: ({ services }) => languageModel(services).models(),
  }),
  route({
    method: 'POST',
    path: '/ai/tools/documents/ask',
    capability: { acl: 'filesAcl', action: 'READ' },
    body: AskDocumentsBody,
    handler: ({ services, project, body }) => askDocuments(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/ai/tools/documents/summarize',
    capability: { acl: 'filesAcl', action: 'READ' },
    body: SummarizeDocumentsBody,
    handler: ({ services, project, body }) => summarizeDocuments(services, project.id, body),
  }),
];
