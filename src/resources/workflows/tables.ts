/**
 * The tables of workflows. Each row is reached by its project and its own key (an external id, a version,
 * an execution's UUID); definitions, inputs and outputs are JSON the engine reads whole. An execution keeps
 * the session it runs with (`grant`, a secret never answered).
 */
import type { TableDef } from '../../storage/schema.js';

export const workflowTables: readonly TableDef[] = [
  {
    name: 'workflows',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      external_id: { type: 'text', notNull: true },
      description: { type: 'text' },
      data_set_id: { type: 'integer' },
      max_concurrent_executions: { type: 'integer' },
      created_time: { type: 'integer', notNull: true },
      last_updated_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['project_id', 'external_id'],
  },
  {
    name: 'workflow_versions',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      workflow_external_id: { type: 'text', notNull: true },
      version: { type: 'text', notNull: true },
      definition: { type: 'text', notNull: true },
      created_time: { type: 'integer', notNull: true },
      last_updated_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['project_id', 'workflow_external_id', 'version'],
    indexes: [{ name: 'workflow_versions_created', columns: ['project_id', 'created_time'] }],
  },
  {
    name: 'workflow_executions',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      id: { type: 'text', notNull: true },
      workflow_external_id: { type: 'text', notNull: true },
      version: { type: 'text', notNull: true },
      status: { type: 'text', notNull: true },
      engine_execution_id: { type: 'text', notNull: true },
      definition: { type: 'text', notNull: true },
      input: { type: 'text' },
      metadata: { type: 'text' },
      grant_json: { type: 'text', notNull: true },
      reason: { type: 'text' },
      created_time: { type: 'integer', notNull: true },
      start_time: { type: 'integer' },
      end_time: { type: 'integer' },
      last_updated_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['project_id', 'id'],
    indexes: [
      { name: 'workflow_executions_created', columns: ['project_id', 'created_time', 'id'] },
      { name: 'workflow_executions_running', columns: ['project_id', 'workflow_external_id', 'status'] },
    ],
  },
  {
    name: 'workflow_tasks',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      id: { type: 'text', notNull: true },
      execution_id: { type: 'text', notNull: true },
      external_id: { type: 'text', notNull: true },
      // The dynamic task or subworkflow it runs under; '' at the top of the execution.
      parent: { type: 'text', notNull: true, default: "''" },
      task_type: { type: 'text', notNull: true },
      status: { type: 'text', notNull: true },
      definition: { type: 'text', notNull: true },
      input: { type: 'text' },
      output: { type: 'text' },
      // The tasks of a dynamic task or subworkflow, once known.
      children: { type: 'text' },
      reason: { type: 'text' },
      retries_left: { type: 'integer', notNull: true },
      // Each (re)start of the task; its jobs are keyed by it.
      attempt: { type: 'integer', notNull: true, default: 0 },
      seq: { type: 'integer', notNull: true },
      start_time: { type: 'integer' },
      end_time: { type: 'integer' },
    },
    primaryKey: ['project_id', 'id'],
    indexes: [{ name: 'workflow_tasks_execution', columns: ['project_id', 'execution_id', 'seq'] }],
  },
  {
    name: 'workflow_triggers',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      external_id: { type: 'text', notNull: true },
      trigger_rule: { type: 'text', notNull: true },
      workflow_external_id: { type: 'text', notNull: true },
      workflow_version: { type: 'text', notNull: true },
      input: { type: 'text' },
      metadata: { type: 'text' },
      grant_json: { type: 'text', notNull: true },
      is_paused: { type: 'integer', notNull: true, default: 0 },
      // A data modeling trigger's sync cursors and the batch waiting to be passed on.
      state: { type: 'text' },
      created_time: { type: 'integer', notNull: true },
      last_updated_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['project_id', 'external_id'],
  },
  {
    name: 'workflow_trigger_runs',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      id: { type: 'text', notNull: true },
      trigger_external_id: { type: 'text', notNull: true },
      fire_time: { type: 'integer', notNull: true },
      workflow_external_id: { type: 'text', notNull: true },
      workflow_version: { type: 'text', notNull: true },
      execution_id: { type: 'text' },
      status: { type: 'text', notNull: true },
      reason: { type: 'text' },
    },
    primaryKey: ['project_id', 'id'],
    indexes: [{ name: 'workflow_trigger_runs_fired', columns: ['project_id', 'trigger_external_id', 'fire_time'] }],
  },
];
