/** Streams and records: high-volume records typed by data modeling containers, with their configuration section and jobs. */
import type { Area } from '../../http/area.js';
import { streamRoutes } from './routes.js';
import { STREAMS_SETTINGS } from './settings.js';
import { registerStreamJobs } from './streams.js';
import { streamTables } from './tables.js';

export const streamsArea: Area = {
  name: 'streams and records',
  routes: streamRoutes,
  tables: streamTables,
  config: STREAMS_SETTINGS,
  registerJobs: registerStreamJobs,
};
