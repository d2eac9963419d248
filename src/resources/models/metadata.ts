/**
 * The fields the service sets on every space, container, view and data model it returns.
 */
export interface SchemaMetadata {
  createdTime: number;
  lastUpdatedTime: number;
  /** Part of the global system schema (the core data model), the same in every project and read-only. */
  isGlobal: boolean;
}
