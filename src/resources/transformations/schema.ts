/** Request shapes of transformations, their jobs, query previews and notifications. */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, FilterRef, IgnoreUnknownIds, InternalId, ItemRef, ItemRefs, Limit, ListCursor, orNull, partialObject, TimestampRange } from '../../http/common-schemas.js';
import { DataSourceCreate } from './datasources.js';
import { ConflictMode, Nonce, TRANSFORMATION_LIMITS, transformationModel } from './model.js';

const items = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Array(item, { minItems: 1, maxItems: TRANSFORMATION_LIMITS.items });

/** OIDC client credentials, which the reference takes and Strata refuses by name (it takes session nonces). */
const OidcCredentials = Type.Unknown();

export const TransformationCreate = Type.Composite(
  [
    Type.Omit(transformationModel.createSchema, ['owner', 'sourceSession', 'destinationSession'], { additionalProperties: false }),
    Type.Object({
      sourceNonce: Type.Optional(Nonce),
      destinationNonce: Type.Optional(Nonce),
      sourceOidcCredentials: Type.Optional(OidcCredentials),
      destinationOidcCredentials: Type.Optional(OidcCredentials),
    }),
  ],
  { additionalProperties: false },
);
export type TransformationCreate = Static<typeof TransformationCreate>;
export const CreateTransformationsBody = Type.Object({ items: items(TransformationCreate) }, { additionalProperties: false });

export interface TransformationPatch {
  sourceNonce?: { set: Nonce } | { setNull: true };
  destinationNonce?: { set: Nonce } | { setNull: true };
  sourceOidcCredentials?: unknown;
  destinationOidcCredentials?: unknown;
}
export const UpdateTransformationsBody = transformationModel.updateBody<TransformationPatch & Record<string, unknown>>(TRANSFORMATION_LIMITS.items);

export const TransformationIdsBody = Type.Object(
  { items: ItemRefs(TRANSFORMATION_LIMITS.items), ignoreUnknownIds: IgnoreUnknownIds, withJobDetails: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const DeleteTransformationsBody = Type.Object({ items: ItemRefs(TRANSFORMATION_LIMITS.items), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });

/** The longest pattern `nameRegex` and `queryRegex` take. */
export const MAX_REGEX_LENGTH = 1000;
const Regex = Type.String({ maxLength: MAX_REGEX_LENGTH });

export const TransformationFilter = partialObject({
  isPublic: Type.Boolean(),
  nameRegex: Regex,
  queryRegex: Regex,
  tags: Type.Object({ containsAny: Type.Array(Type.String({ maxLength: 255 }), { minItems: 1, maxItems: 100 }) }, { additionalProperties: false }),
  destinationType: Type.String({ minLength: 1, maxLength: 32 }),
  conflictMode: ConflictMode,
  hasBlockedError: Type.Boolean(),
  cdfProjectName: Type.String(),
  createdTime: TimestampRange,
  lastUpdatedTime: TimestampRange,
  dataSetIds: Type.Array(FilterRef, { minItems: 1, maxItems: 100 }),
});
export type TransformationFilter = Static<typeof TransformationFilter>;
export const FilterTransformationsBody = Type.Object(
  { filter: TransformationFilter, limit: Type.Optional(Limit), cursor: Type.Optional(ListCursor) },
  { additionalProperties: false },
);
export const ListTransformationsQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(Cursor), includePublic: Type.Optional(Type.Boolean()), withJobDetails: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const RunBody = Type.Composite([ItemRef, Type.Object({ nonce: Type.Optional(Nonce) })], { additionalProperties: false });
export type RunBody = Static<typeof RunBody>;
export const CancelBody = ItemRef;

export const ListJobsQuery = Type.Object(
  { transformationId: Type.Optional(InternalId), transformationExternalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
export const JobIdsBody = Type.Object(
  { items: Type.Array(Type.Object({ id: InternalId }, { additionalProperties: false }), { minItems: 1, maxItems: TRANSFORMATION_LIMITS.items }), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);
export const JobIdParams = Type.Object({ project: Type.String(), id: InternalId });

export const PREVIEW_LIMITS = { limit: 100, sourceLimit: 100, maxLimit: 10_000, timeoutSeconds: 60, maxTimeoutSeconds: 240 } as const;
export const PreviewBody = Type.Object(
  {
    query: Type.String({ maxLength: TRANSFORMATION_LIMITS.query }),
    convertToString: Type.Boolean(),
    // Null as absent (the default), except `sourceLimit`, whose null reads every row.
    limit: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: PREVIEW_LIMITS.maxLimit }))),
    sourceLimit: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: PREVIEW_LIMITS.maxLimit }))),
    inferSchemaLimit: Type.Optional(orNull(Type.Integer({ minimum: 1 }))),
    timeout: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: PREVIEW_LIMITS.maxTimeoutSeconds }))),
  },
  { additionalProperties: false },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const SchemaParams = Type.Object({ project: Type.String(), schemaType: Type.String({ minLength: 1, maxLength: 64 }) });
// `limit` and `cursor` are what the clients' list helpers send; a schema is one page.
export const SchemaQuery = Type.Object({ conflictMode: Type.Optional(ConflictMode), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
const Name = Type.String({ minLength: 1, maxLength: 255 });
export const InstanceSchemaQuery = Type.Object(
  {
    conflictMode: Type.Optional(ConflictMode),
    viewSpace: Type.Optional(Name),
    viewExternalId: Type.Optional(Name),
    viewVersion: Type.Optional(Name),
    instanceType: Type.Optional(Type.Union([Type.Literal('nodes'), Type.Literal('edges')])),
    withInstanceSpace: Type.Optional(Type.Boolean()),
    isConnectionDefinition: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const SequenceRowSchemaQuery = Type.Object({ externalId: Name }, { additionalProperties: false });

export const NotificationCreate = Type.Union([
  Type.Object({ destination: Type.String({ minLength: 1, maxLength: 255 }), transformationId: InternalId }, { additionalProperties: false }),
  Type.Object({ destination: Type.String({ minLength: 1, maxLength: 255 }), transformationExternalId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
]);
export type NotificationCreate = Static<typeof NotificationCreate>;
export const CreateNotificationsBody = Type.Object({ items: items(NotificationCreate) }, { additionalProperties: false });
export const ListNotificationsQuery = Type.Object(
  {
    transformationId: Type.Optional(InternalId),
    transformationExternalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    destination: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export const DeleteNotificationsBody = Type.Object(
  { items: Type.Array(Type.Object({ id: InternalId }, { additionalProperties: false }), { minItems: 1, maxItems: TRANSFORMATION_LIMITS.items }) },
  { additionalProperties: false },
);

const Interval = Type.String({ minLength: 1, maxLength: 255 });
export const ScheduleCreate = Type.Composite([ItemRef, Type.Object({ interval: Interval, isPaused: Type.Optional(Type.Boolean()) })], { additionalProperties: false });
export const CreateSchedulesBody = Type.Object({ items: items(ScheduleCreate) }, { additionalProperties: false });
export const ScheduleIdsBody = Type.Object({ items: ItemRefs(TRANSFORMATION_LIMITS.items), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });
export const UpdateSchedulesBody = Type.Object(
  {
    items: items(
      Type.Composite(
        [
          ItemRef,
          Type.Object({
            update: Type.Object(
              {
                interval: Type.Optional(Type.Object({ set: Interval }, { additionalProperties: false })),
                isPaused: Type.Optional(Type.Object({ set: Type.Boolean() }, { additionalProperties: false })),
              },
              { additionalProperties: false },
            ),
          }),
        ],
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export const ListSchedulesQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor), includePublic: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

export const CreateDataSourcesBody = Type.Object({ items: Type.Array(DataSourceCreate, { minItems: 1, maxItems: 100 }) }, { additionalProperties: false });
export const DeleteDataSourcesBody = Type.Object(
  { items: Type.Array(Type.Object({ externalId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);
export const VerifyDataSourceBody = Type.Object({ externalId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
export const ListDataSourcesQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
