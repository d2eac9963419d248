/**
 * Request shapes of agents, agent chat and skills, as the official clients send them (the Python SDK's
 * agents API and data classes; the toolkit's skills).
 */
import { Type, type Static } from '@sinclair/typebox';
import { IgnoreUnknownIds } from '../../http/common-schemas.js';
import { AGENT_LIMITS, AgentExternalId, agentModel, SKILL_LIMITS, SkillExternalId, skillModel } from './model.js';

const items = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number) => Type.Array(item, { minItems: 1, maxItems });

// `ownerId` is the service's to set; `runtimeVersion` has a default.
export const AgentUpsert = Type.Omit(agentModel.createSchema, ['ownerId'], { additionalProperties: false });
export type AgentUpsert = Static<typeof AgentUpsert>;
export const UpsertAgentsBody = Type.Object({ items: items(AgentUpsert, AGENT_LIMITS.writeItems) }, { additionalProperties: false });
export const AgentIdsBody = Type.Object({ items: items(agentModel.refSchema, AGENT_LIMITS.byIds), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });

const TextContent = Type.Object({ type: Type.Literal('text'), text: Type.String({ maxLength: 100_000 }) }, { additionalProperties: false });
const ImageContent = Type.Object(
  { type: Type.Literal('image'), data: Type.String(), mediaType: Type.Union([Type.Literal('image/png'), Type.Literal('image/jpeg'), Type.Literal('image/webp')]) },
  { additionalProperties: false },
);
const Content = Type.Union([TextContent, ImageContent]);
const Contents = Type.Union([Content, Type.Array(Content, { minItems: 1, maxItems: 20 })]);

const UserMessage = Type.Object({ role: Type.Literal('user'), content: Contents }, { additionalProperties: false });
const ClientToolResult = Type.Object(
  {
    role: Type.Literal('action'),
    type: Type.Literal('clientTool'),
    actionId: Type.String({ minLength: 1, maxLength: 255 }),
    content: TextContent,
    data: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 1000 })),
  },
  { additionalProperties: false },
);
const ToolConfirmationResult = Type.Object(
  { role: Type.Literal('action'), type: Type.Literal('toolConfirmation'), actionId: Type.String({ minLength: 1, maxLength: 255 }), status: Type.Union([Type.Literal('ALLOW'), Type.Literal('DENY')]) },
  { additionalProperties: false },
);
export const ChatInput = Type.Union([UserMessage, ClientToolResult, ToolConfirmationResult]);
export type ChatInput = Static<typeof ChatInput>;

export const ClientToolAction = Type.Object(
  {
    type: Type.Literal('clientTool'),
    clientTool: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-zA-Z0-9_-]+$' }),
        description: Type.String({ minLength: 1, maxLength: 4096 }),
        parameters: Type.Record(Type.String(), Type.Unknown()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type ClientToolAction = Static<typeof ClientToolAction>;

export const ChatBody = Type.Object(
  {
    agentExternalId: Type.Optional(AgentExternalId),
    // The earlier name of `agentExternalId`, still accepted.
    agentId: Type.Optional(AgentExternalId),
    messages: Type.Array(ChatInput, { minItems: 1, maxItems: 100 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    actions: Type.Optional(Type.Array(ClientToolAction, { maxItems: AGENT_LIMITS.actions })),
  },
  { additionalProperties: false },
);
export type ChatBody = Static<typeof ChatBody>;

export const SkillCreate = Type.Omit(skillModel.createSchema, ['files', 'blobKey'], { additionalProperties: false });
export type SkillCreate = Static<typeof SkillCreate>;
export const CreateSkillsBody = Type.Object({ items: items(SkillCreate, SKILL_LIMITS.writeItems) }, { additionalProperties: false });
export const SkillIdsBody = Type.Object({ items: items(skillModel.refSchema, SKILL_LIMITS.byIds), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });
export const SkillParams = Type.Object({ project: Type.String(), skillExternalId: SkillExternalId });
export const SkillUploadBody = Type.Object(
  {
    // The skill's files as one bundle (a zip archive, or a single SKILL.md), base64-encoded.
    content: Type.String({ minLength: 1, maxLength: Math.ceil((SKILL_LIMITS.upload * 4) / 3) + 4, contentEncoding: 'base64' }),
    mimeType: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);

const DocumentRef = Type.Union([
  Type.Object({ id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  Type.Object({ externalId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
  Type.Object(
    {
      instanceId: Type.Object(
        { space: Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9_-]{0,41}[a-zA-Z0-9]?$' }), externalId: Type.String({ pattern: '^[^\\u0000]{1,256}$' }) },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
]);
const LANGUAGES = ['Chinese', 'Dutch', 'English', 'French', 'German', 'Italian', 'Japanese', 'Korean', 'Latvian', 'Norwegian', 'Portuguese', 'Spanish', 'Swedish'] as const;

export const AskDocumentsBody = Type.Object(
  {
    question: Type.String({ minLength: 1, maxLength: 2048 }),
    fileIds: Type.Array(DocumentRef, { minItems: 1, maxItems: 100 }),
    additionalContext: Type.Optional(Type.String({ minLength: 10, maxLength: 2048 })),
    language: Type.Optional(Type.Union(LANGUAGES.map((l) => Type.Literal(l)))),
    ignoreUnknownIds: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const SummarizeDocumentsBody = Type.Object(
  { items: Type.Array(DocumentRef, { minItems: 1, maxItems: 100 }), ignoreUnknownIds: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** An OpenAI chat-completions request: passed on as it is, with `messages` required. */
export const CompletionsBody = Type.Object({ messages: Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 1000 }) }, { additionalProperties: true });
