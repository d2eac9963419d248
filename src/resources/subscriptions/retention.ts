/**
 * The change log keeps a week: a job of each project with subscriptions deletes, every hour, the changes
 * recorded before then. A cursor older than that continues after the changes that are gone.
 */
import type { AreaRuntime } from '../../http/area.js';
import type { Services } from '../../http/services.js';
import type { Queryable } from '../../storage/store.js';
import { CHANGE_RETENTION_MS, deleteChangesBefore } from './change-log.js';
import { definitions } from './membership.js';

export const RETENTION_JOB = 'subscriptions.retention';
const RETENTION_SCHEDULE = 'subscriptions.retention';

/** Schedules the project's retention job (once: scheduling again keeps the one there is). */
export async function scheduleRetention(services: Services, tx: Queryable, projectId: number): Promise<void> {
  await services.jobs?.schedule(tx, { projectId, name: RETENTION_SCHEDULE, kind: RETENTION_JOB, cron: '7 * * * *', payload: {} });
}

export function registerSubscriptionJobs(runtime: AreaRuntime): void {
  const { jobs, store, now } = runtime;
  jobs.register(RETENTION_JOB, async (job, { signal }) => {
    const cutoff = now() - CHANGE_RETENTION_MS;
    let deleted = 0;
    for (const sub of await definitions(store, job.projectId)) {
      for (let part = 0; part < sub.partitionCount && !signal.aborted; part++) {
        deleted += await deleteChangesBefore(store, { projectId: job.projectId, subscriptionId: sub.id, part }, cutoff, signal);
      }
    }
    return { deleted };
  });
}
