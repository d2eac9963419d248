/** The signals area: sinks, subscriptions tying sinks to topics, and the signals pushed to sinks (beta channel). */
import type { Area } from '../../http/area.js';
import { signalTables, sinkModel, subscriptionModel } from './model.js';
import { signalRoutes } from './routes.js';
import { registerSignalJobs } from './service.js';
import { SIGNAL_SETTINGS } from './settings.js';

export const signalsArea: Area = {
  name: 'signals',
  routes: signalRoutes,
  tables: [...sinkModel.tables, ...subscriptionModel.tables, ...signalTables],
  config: SIGNAL_SETTINGS as Area['config'],
  registerJobs: registerSignalJobs,
};
