/**
 * The evaluation suite format as TypeScript types. They mirror schemas/eval-suite.schema.json and describe
 * a document only after it has passed that schema; test/evals keeps them aligned with the schema.
 */

export interface Tool {
  name: string;
  description: string;
}

export interface DataModelReference {
  space: string;
  externalId: string;
  version: string;
}

/** The settings a suite file and a case can both give; the most specific level wins. */
export interface AgentSettings {
  dataModels?: DataModelReference[];
  instanceSpaces?: string[];
  appContext?: string;
  tools?: Tool[];
}

export interface SuiteDocument extends AgentSettings {
  include?: string[];
  cases?: EvalCase[];
  tags?: string[];
}

export interface EvalCase extends AgentSettings {
  id: string;
  tags?: string[];
  expectPass?: boolean;
  turns: Turn[];
}

export interface Turn {
  input: string;
  scorers?: Scorer[];
}

export type Scorer =
  | { type: 'correctness'; criteria: string }
  | { type: 'faithfulness'; groundTruth: string }
  | { type: 'toolSelection' | 'toolInvocation'; tools?: Tool[] };

export type ScorerType = Scorer['type'];

/** `<name>.agent.yaml`: only its tools matter here; the rest belongs to the agent definition. */
export interface AgentFile {
  tools: Tool[];
}
