/**
 * Request and response shapes of the statistics operations: the project's usage and limits, and the usage
 * of each space. `POST /models/statistics/spaces/byids` takes the body of the space by-ids operation
 * (`SpaceIdsBody`).
 */
import { Type, type Static } from '@sinclair/typebox';
import { SpaceId } from './identifiers.js';

const strict = { additionalProperties: false } as const;

const CountAndLimit = Type.Object({ count: Type.Integer(), limit: Type.Integer() }, strict);

export const ProjectStatistics = Type.Object(
  {
    spaces: CountAndLimit,
    containers: CountAndLimit,
    /** All versions. */
    views: CountAndLimit,
    dataModels: CountAndLimit,
    containerProperties: CountAndLimit,
    instances: Type.Object(
      {
        edges: Type.Integer(),
        softDeletedEdges: Type.Integer(),
        nodes: Type.Integer(),
        softDeletedNodes: Type.Integer(),
        instances: Type.Integer(),
        instancesLimit: Type.Integer(),
        softDeletedInstances: Type.Integer(),
        softDeletedInstancesLimit: Type.Integer(),
      },
      strict,
    ),
    concurrentReadLimit: Type.Integer(),
    concurrentWriteLimit: Type.Integer(),
    concurrentDeleteLimit: Type.Integer(),
  },
  strict,
);
export type ProjectStatistics = Static<typeof ProjectStatistics>;

export const SpaceStatistics = Type.Object(
  {
    space: SpaceId,
    containers: Type.Integer(),
    views: Type.Integer(),
    dataModels: Type.Integer(),
    nodes: Type.Integer(),
    edges: Type.Integer(),
    softDeletedNodes: Type.Integer(),
    softDeletedEdges: Type.Integer(),
  },
  strict,
);
export type SpaceStatistics = Static<typeof SpaceStatistics>;

export const SpaceStatisticsResponse = Type.Object({ items: Type.Array(SpaceStatistics) }, strict);
export type SpaceStatisticsResponse = Static<typeof SpaceStatisticsResponse>;
