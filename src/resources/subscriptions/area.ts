/** Data point subscriptions: their definitions and members, and the change log they are read from. */
import type { Area } from '../../http/area.js';
import { changeLogTables } from './change-log.js';
import { subscriptionMembersTable, subscriptionModel, subscriptionSeriesTable } from './model.js';
import { registerSubscriptionJobs } from './retention.js';
import { subscriptionRoutes } from './routes.js';

export const subscriptionsArea: Area = {
  name: 'data point subscriptions',
  routes: subscriptionRoutes,
  tables: [...subscriptionModel.tables, subscriptionMembersTable, subscriptionSeriesTable, ...changeLogTables],
  registerJobs: registerSubscriptionJobs,
};
