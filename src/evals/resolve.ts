/**
 * What each case will run with. Settings are most-specific-wins: root file, then each included file down
 * to the one holding the case, then the case, then (for tools) the scorer. Tools fall back to the agent
 * file when no level sets them.
 */
import type { LoadedAgent } from './agent-file.js';
import type { LoadedSuite, SuiteFile } from './suite-loader.js';
import type { AgentSettings, DataModelReference, EvalCase, Scorer, ScorerType, Tool } from './suite-types.js';

/** Where a resolved value came from: `file:<path>` is an included file, `agent:<file>` the agent file. */
export type SettingSource = 'scorer' | 'case' | `file:${string}` | 'root' | `agent:${string}` | 'none';

export interface Resolved<T> {
  source: SettingSource;
  value: T | null;
}

export interface ResolvedScorer {
  type: ScorerType;
  criteria?: string;
  groundTruth?: string;
  tools: Resolved<Tool[]>;
}

export interface ResolvedTurn {
  input: string;
  scorers: ResolvedScorer[];
}

export interface ResolvedCase {
  id: string;
  /** The file that defines the case, relative to the evaluation directory. */
  file: string;
  tags: string[];
  expectPass: boolean;
  dataModels: Resolved<DataModelReference[]>;
  instanceSpaces: Resolved<string[]>;
  appContext: Resolved<string>;
  turns: ResolvedTurn[];
}

export interface ResolvedSuite {
  suite: string;
  agent: string | null;
  cases: ResolvedCase[];
}

const NONE = { source: 'none', value: null } as const;

export function resolveSuite(suite: LoadedSuite, agent?: LoadedAgent): ResolvedSuite {
  const cases = suite.files.flatMap((file) => (file.document.cases ?? []).map((entry) => resolveCase(entry, file, agent)));
  return { suite: suite.root.path, agent: agent?.path ?? null, cases };
}

function resolveCase(entry: EvalCase, file: SuiteFile, agent: LoadedAgent | undefined): ResolvedCase {
  const levels = settingLevels(entry, file);
  const caseTools = pick(levels, 'tools');
  const agentTools: Resolved<Tool[]> = agent ? { source: `agent:${agent.path}`, value: agent.definition.tools } : NONE;
  const fallbackTools = caseTools.source === 'none' ? agentTools : caseTools;
  return {
    id: entry.id,
    file: file.path,
    tags: [...new Set([...(entry.tags ?? []), ...(file.document.tags ?? [])])],
    expectPass: entry.expectPass ?? true,
    dataModels: pick(levels, 'dataModels'),
    instanceSpaces: pick(levels, 'instanceSpaces'),
    appContext: pick(levels, 'appContext'),
    turns: entry.turns.map((turn) => ({
      input: turn.input,
      scorers: (turn.scorers ?? []).map((scorer) => resolveScorer(scorer, fallbackTools)),
    })),
  };
}

function resolveScorer(scorer: Scorer, fallbackTools: Resolved<Tool[]>): ResolvedScorer {
  switch (scorer.type) {
    case 'correctness':
      return { type: scorer.type, criteria: scorer.criteria, tools: fallbackTools };
    case 'faithfulness':
      return { type: scorer.type, groundTruth: scorer.groundTruth, tools: fallbackTools };
    default:
      return { type: scorer.type, tools: scorer.tools ? { source: 'scorer', value: scorer.tools } : fallbackTools };
  }
}

interface SettingLevel {
  source: SettingSource;
  settings: AgentSettings;
}

/** Most specific first: the case, the file holding it, the file that included that one, ..., the root. */
function settingLevels(entry: EvalCase, file: SuiteFile): SettingLevel[] {
  const levels: SettingLevel[] = [{ source: 'case', settings: entry }];
  for (let level: SuiteFile | undefined = file; level; level = level.includedBy) {
    levels.push({ source: level.includedBy ? `file:${level.path}` : 'root', settings: level.document });
  }
  return levels;
}

function pick<K extends keyof AgentSettings>(levels: readonly SettingLevel[], key: K): Resolved<NonNullable<AgentSettings[K]>> {
  for (const { source, settings } of levels) {
    const value = settings[key];
    if (value !== undefined) return { source, value };
  }
  return NONE;
}
