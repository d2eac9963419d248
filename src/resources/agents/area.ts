/** The agents area: agents and their chat, skills, the language model behind them, and the document tools. */
import type { Area } from '../../http/area.js';
import { LLM_SETTINGS } from './llm.js';
import { agentModel, skillModel } from './model.js';
import { agentRoutes } from './routes.js';
import { conversationsTable } from './service.js';

export const agentsArea: Area = {
  name: 'agents',
  routes: agentRoutes,
  tables: [...agentModel.tables, ...skillModel.tables, conversationsTable],
  config: LLM_SETTINGS as Area['config'],
};
