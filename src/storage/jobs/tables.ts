/**
 * The tables of durable jobs and their schedules (see jobs.ts). Runners look for due work across projects,
 * by state and time; everything else reaches a job by its project and id.
 */
import type { TableDef } from '../schema.js';

export const jobTables: readonly TableDef[] = [
  {
    name: 'jobs',
    columns: {
      id: { type: 'id' },
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      kind: { type: 'text', notNull: true },
      // Starting a job twice under one key starts it once (a schedule's firing, a client's retried request).
      dedupe_key: { type: 'text' },
      payload: { type: 'text', notNull: true },
      // queued | running | succeeded | failed | cancelled | timedOut
      state: { type: 'text', notNull: true },
      attempts: { type: 'integer', notNull: true, default: 0 },
      max_attempts: { type: 'integer', notNull: true },
      run_after: { type: 'integer', notNull: true },
      deadline: { type: 'integer' },
      scheduled_time: { type: 'integer' },
      lease_owner: { type: 'text' },
      lease_until: { type: 'integer' },
      progress: { type: 'text' },
      result: { type: 'text' },
      error: { type: 'text' },
      created_time: { type: 'integer', notNull: true },
      started_time: { type: 'integer' },
      finished_time: { type: 'integer' },
      last_updated_time: { type: 'integer', notNull: true },
    },
    indexes: [
      { name: 'jobs_dedupe', columns: ['project_id', 'kind', 'dedupe_key'], unique: true },
      { name: 'jobs_due', columns: ['state', 'run_after'] },
      { name: 'jobs_lease', columns: ['state', 'lease_until'] },
      { name: 'jobs_deadline', columns: ['state', 'deadline'] },
      { name: 'jobs_ended', columns: ['kind', 'finished_time'] },
    ],
  },
  {
    name: 'job_schedules',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      name: { type: 'text', notNull: true },
      kind: { type: 'text', notNull: true },
      cron: { type: 'text', notNull: true },
      time_zone: { type: 'text', notNull: true },
      payload: { type: 'text', notNull: true },
      next_time: { type: 'integer', notNull: true },
      created_time: { type: 'integer', notNull: true },
      last_updated_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['project_id', 'name'],
    indexes: [{ name: 'job_schedules_due', columns: ['next_time'] }],
  },
];
