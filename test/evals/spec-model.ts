/**
 * The suite format as the spec states it ("Agent evaluation suite file"), written out independently of
 * schemas/eval-suite.schema.json so that generated tests can catch the schema disagreeing with the spec.
 */
import type { SuiteDocument } from '../../src/evals/suite-types.js';

export type ShapeName =
  | 'file'
  | 'case'
  | 'turn'
  | 'correctness'
  | 'faithfulness'
  | 'toolSelection'
  | 'toolInvocation'
  | 'dataModel'
  | 'tool';

export type FieldRule =
  | { kind: 'text' }
  | { kind: 'boolean' }
  | { kind: 'scorerType' }
  | { kind: 'texts'; minItems: 0 | 1 }
  | { kind: 'objects'; of: ShapeName | 'scorer'; minItems: 0 | 1 };

export interface Shape {
  fields: Record<string, FieldRule>;
  required: string[];
}

const text = { kind: 'text' } as const;
const settings: Record<string, FieldRule> = {
  dataModels: { kind: 'objects', of: 'dataModel', minItems: 1 },
  instanceSpaces: { kind: 'texts', minItems: 1 },
  appContext: text,
  tools: { kind: 'objects', of: 'tool', minItems: 1 },
};
const scorerTools: FieldRule = { kind: 'objects', of: 'tool', minItems: 0 };

export const SHAPES: Record<ShapeName, Shape> = {
  file: {
    fields: {
      include: { kind: 'texts', minItems: 0 },
      cases: { kind: 'objects', of: 'case', minItems: 0 },
      ...settings,
      tags: { kind: 'texts', minItems: 0 },
    },
    required: [],
  },
  case: {
    fields: {
      id: text,
      tags: { kind: 'texts', minItems: 0 },
      expectPass: { kind: 'boolean' },
      turns: { kind: 'objects', of: 'turn', minItems: 1 },
      ...settings,
    },
    required: ['id', 'turns'],
  },
  turn: {
    fields: { input: text, scorers: { kind: 'objects', of: 'scorer', minItems: 1 } },
    required: ['input'],
  },
  correctness: { fields: { type: { kind: 'scorerType' }, criteria: text }, required: ['type', 'criteria'] },
  faithfulness: { fields: { type: { kind: 'scorerType' }, groundTruth: text }, required: ['type', 'groundTruth'] },
  toolSelection: { fields: { type: { kind: 'scorerType' }, tools: scorerTools }, required: ['type'] },
  toolInvocation: { fields: { type: { kind: 'scorerType' }, tools: scorerTools }, required: ['type'] },
  dataModel: { fields: { space: text, externalId: text, version: text }, required: ['space', 'externalId', 'version'] },
  tool: { fields: { name: text, description: text }, required: ['name', 'description'] },
};

export const SCORER_TYPES = ['correctness', 'faithfulness', 'toolSelection', 'toolInvocation'] as const;

// Functions, not shared constants: a mutation of one level must not show up at another.
const tools = () => [
  { name: 'find_asset', description: 'Finds an asset by name.' },
  { name: 'read_series', description: 'Reads a time series; parameters externalId, start, end.' },
];
const dataModels = () => [{ space: 'plant', externalId: 'Equipment', version: 'v1' }];

/** Every property of the format at every level, once: an included file (`leaf.yaml` must exist beside it). */
export const FULL_FRAGMENT = {
  include: ['leaf.yaml'],
  tags: ['pumps', 'smoke'],
  dataModels: dataModels(),
  instanceSpaces: ['plant-a'],
  appContext: 'Operators of plant A.',
  tools: tools(),
  cases: [
    {
      id: 'pump-status',
      tags: ['status'],
      expectPass: false,
      dataModels: dataModels(),
      instanceSpaces: ['plant-a-pumps'],
      appContext: 'A planner asks.',
      tools: tools(),
      turns: [
        {
          input: 'What is the status of pump P-101?',
          scorers: [
            { type: 'correctness', criteria: 'Says it is running.' },
            { type: 'faithfulness', groundTruth: 'P-101 runs at 80 % load.' },
            { type: 'toolSelection', tools: tools() },
            { type: 'toolInvocation', tools: tools() },
          ],
        },
      ],
    },
  ],
} satisfies SuiteDocument;

/** The same for a root file, which may not carry file-level tags. */
export const FULL_ROOT: SuiteDocument = Object.fromEntries(Object.entries(FULL_FRAGMENT).filter(([key]) => key !== 'tags'));

export function shapeOf(value: unknown, rule: ShapeName | 'scorer'): ShapeName {
  return rule === 'scorer' ? ((value as { type: ShapeName }).type) : rule;
}
