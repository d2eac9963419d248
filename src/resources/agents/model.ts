/**
 * Agents and skills, declared once (see resources/model.ts). Both are keyed by their external id alone and
 * written by create-or-update. The tool kinds, and the shapes of an agent and a skill, are those the
 * official clients send (the Python SDK's agents data classes, the toolkit's agent and skill resources).
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineModel, field } from '../model.js';

export const AGENT_LIMITS = {
  externalId: 128,
  name: 255,
  description: 1024,
  instructions: 32_000,
  labels: 20,
  tools: 30,
  subagents: 10,
  skills: 50,
  toolName: 64,
  toolDescription: 4096,
  /** Custom client actions per chat request (the spec's limit). */
  actions: 20,
  /** Items per upsert and delete request, as the Python SDK sends them; by-ids reads take `byIds`. */
  writeItems: 1,
  byIds: 100,
} as const;

export const SKILL_LIMITS = {
  /** Skills per project (the spec's limit). */
  perProject: 200,
  externalId: 128,
  name: 64,
  description: 1024,
  content: 100_000,
  /** Bytes of a skill's uploaded files. */
  upload: 5 * 1024 * 1024,
  writeItems: 1,
  byIds: 100,
} as const;

/**
 * The tool kinds an agent may have, with what each needs in its `configuration`. Strata runs the kinds
 * that read the project (knowledge graph and data point queries, documents, REST calls into this API,
 * function calls); the others are kept and shown to the model but answer that Strata does not run them.
 */
export const TOOL_KINDS = [
  'queryKnowledgeGraph',
  'query',
  'queryTimeSeriesDatapoints',
  'askDocument',
  'summarizeDocument',
  'examineDataSemantically',
  'callRestApi',
  'callFunction',
  'analyzeImage',
  'analyzeTimeSeries',
  'timeSeriesAnalysis',
  'runPythonCode',
] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

const NoNul = '^[^\\u0000]+$';
export const AgentExternalId = Type.String({ minLength: 1, maxLength: AGENT_LIMITS.externalId, pattern: NoNul });

export const AgentTool = Type.Object(
  {
    // Checked against TOOL_KINDS by the agent's rules, so that the message names the unknown kind.
    type: Type.String({ minLength: 1, maxLength: 64 }),
    // The model calls a tool by this name: the function-name form language models accept.
    name: Type.String({ minLength: 1, maxLength: AGENT_LIMITS.toolName, pattern: '^[a-zA-Z0-9_-]+$' }),
    description: Type.String({ minLength: 1, maxLength: AGENT_LIMITS.toolDescription }),
    configuration: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type AgentTool = Static<typeof AgentTool>;

const Subagent = Type.Object({ agentExternalId: AgentExternalId }, { additionalProperties: false });
const ExampleQuestion = Type.Object(
  {
    question: Type.String({ minLength: 1, maxLength: 2048 }),
    expectedMessages: Type.Optional(Type.Array(Type.Object({ role: Type.String(), content: Type.String() }, { additionalProperties: false }), { maxItems: 20 })),
  },
  { additionalProperties: false },
);

export const agentModel = defineModel({
  noun: 'agent',
  acl: 'agentsAcl',
  table: 'ai_agents',
  alias: 'aa',
  key: ['externalId'],
  fields: {
    externalId: field.string(AgentExternalId, { notNull: true, query: { maxValueLength: AGENT_LIMITS.externalId, sortable: true } }),
    name: field.string(Type.String({ minLength: 1, maxLength: AGENT_LIMITS.name }), { notNull: true, required: true }),
    description: field.string(Type.String({ maxLength: AGENT_LIMITS.description })),
    instructions: field.string(Type.String({ maxLength: AGENT_LIMITS.instructions })),
    model: field.string(Type.String({ minLength: 1, maxLength: 255 })),
    runtimeVersion: field.string(Type.String({ minLength: 1, maxLength: 32, pattern: '^\\d+\\.\\d+\\.\\d+$' }), { notNull: true }),
    // Left out when not given, as the Python SDK compares an agent read back with the one it wrote.
    labels: field.json(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: AGENT_LIMITS.labels, uniqueItems: true })),
    tools: field.jsonList(Type.Array(AgentTool, { maxItems: AGENT_LIMITS.tools }), AGENT_LIMITS.tools),
    subagents: field.json(Type.Array(Subagent, { maxItems: AGENT_LIMITS.subagents })),
    skills: field.json(Type.Array(Type.String({ minLength: 1, maxLength: SKILL_LIMITS.externalId }), { maxItems: AGENT_LIMITS.skills, uniqueItems: true })),
    exampleQuestions: field.json(Type.Array(ExampleQuestion, { maxItems: 20 })),
    // Set by the service: the principal that last wrote the agent.
    ownerId: field.string(Type.String(), { notNull: true, patch: false }),
  },
});

/** 1–128 characters, no NUL, not starting with `cdf-` (names of that form are the service's own). */
export const SkillExternalId = Type.String({ minLength: 1, maxLength: SKILL_LIMITS.externalId, pattern: '^(?!cdf-)[^\\u0000]+$' });

export const skillModel = defineModel({
  noun: 'skill',
  acl: 'agentsAcl',
  table: 'ai_skills',
  alias: 'ask',
  key: ['externalId'],
  fields: {
    externalId: field.string(SkillExternalId, { notNull: true, query: { maxValueLength: SKILL_LIMITS.externalId, sortable: true } }),
    name: field.string(Type.String({ minLength: 1, maxLength: SKILL_LIMITS.name, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' }), { notNull: true, required: true }),
    description: field.string(Type.String({ minLength: 1, maxLength: SKILL_LIMITS.description }), { notNull: true, required: true }),
    content: field.string(Type.String({ minLength: 1, maxLength: SKILL_LIMITS.content })),
    // What `upload` stored for the skill on the blob store: its media type and size in bytes.
    files: field.json(Type.Object({ mimeType: Type.String(), size: Type.Integer() }), { patch: false }),
    // The blob of the uploaded files.
    blobKey: field.string(Type.String(), { hidden: true, patch: false }),
  },
});
