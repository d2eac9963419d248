/** The tables of the mechanisms every area builds on: blobs kept in the database, durable jobs and schedules. */
import { blobTables } from './blobs/database-store.js';
import { jobTables } from './jobs/tables.js';
import type { TableDef } from './schema.js';

export const platformTables: readonly TableDef[] = [...blobTables, ...jobTables];
