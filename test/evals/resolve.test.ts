/**
 * `strata evals resolve`: most-specific-wins for every combination of levels, the agent-file fallback,
 * tags, expectPass and the order of cases.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ResolvedCase, ResolvedSuite } from '../../src/evals/resolve.js';
import { runEvals, Scratch, type SuiteFiles } from './support.js';

const scratch = new Scratch();
afterAll(() => scratch.dispose());

const tool = (name: string) => ({ name, description: `The ${name} tool.` });

async function resolveJson(directory: string, ...options: string[]): Promise<ResolvedSuite> {
  const run = await runEvals('resolve', directory, ...options);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as ResolvedSuite;
}

/** Every subset of the given levels. */
function subsets<T extends string>(levels: readonly T[]): Set<T>[] {
  return Array.from({ length: 2 ** levels.length }, (_, mask) => new Set(levels.filter((_, bit) => mask & (1 << bit))));
}

describe('tool lists', () => {
  const LEVELS = ['root', 'file', 'case', 'scorer', 'agent'] as const;
  const combinations = subsets(LEVELS).map((set) => [[...set].join(' + ') || 'no level', set] as const);

  it.each(combinations)('with tools set at %s', async (_name, set) => {
    const toolsAt = (level: (typeof LEVELS)[number]) => (set.has(level) ? { tools: [tool(`${level}-tool`)] } : {});
    const files: SuiteFiles = {
      'suite.yaml': { include: ['fragment.yaml'], ...toolsAt('root') },
      'fragment.yaml': {
        ...toolsAt('file'),
        cases: [
          {
            id: 'only',
            ...toolsAt('case'),
            turns: [{ input: 'Which tool?', scorers: [{ type: 'toolSelection', ...toolsAt('scorer') }, { type: 'correctness', criteria: 'Right.' }] }],
          },
        ],
      },
      'helper.agent.yaml': { name: 'helper', tools: [tool('agent-tool')] },
    };
    const resolved = await resolveJson(scratch.write(files), ...(set.has('agent') ? ['--agent', 'helper'] : []));
    const [toolSelection, correctness] = resolved.cases[0].turns[0].scorers;

    const expected = (levels: readonly (typeof LEVELS)[number][]) => {
      const level = levels.find((candidate) => set.has(candidate));
      if (!level) return { source: 'none', value: null };
      const source = { root: 'root', file: 'file:fragment.yaml', case: 'case', scorer: 'scorer', agent: 'agent:helper.agent.yaml' }[level];
      return { source, value: [tool(`${level}-tool`)] };
    };
    expect(toolSelection.tools).toEqual(expected(['scorer', 'case', 'file', 'root', 'agent']));
    // A correctness scorer has no tools of its own, and takes the case's list.
    expect(correctness.tools).toEqual(expected(['case', 'file', 'root', 'agent']));
    expect(resolved.agent).toBe(set.has('agent') ? 'helper.agent.yaml' : null);
  });

  it('keeps an empty tool list given at the scorer', async () => {
    const directory = scratch.write({
      'suite.yaml': { tools: [tool('root-tool')], cases: [{ id: 'a', turns: [{ input: 'q', scorers: [{ type: 'toolInvocation', tools: [] }] }] }] },
    });
    const resolved = await resolveJson(directory);
    expect(resolved.cases[0].turns[0].scorers[0].tools).toEqual({ source: 'scorer', value: [] });
  });
});

describe('settings through nested includes', () => {
  const LEVELS = ['root', 'outer', 'inner', 'case'] as const;
  const combinations = subsets(LEVELS).map((set) => [[...set].join(' + ') || 'no level', set] as const);

  it.each(combinations)('with settings at %s', async (_name, set) => {
    const settingsAt = (level: (typeof LEVELS)[number]) =>
      set.has(level)
        ? {
            dataModels: [{ space: level, externalId: 'Model', version: 'v1' }],
            instanceSpaces: [`${level}-space`],
            appContext: `Context of ${level}.`,
            tools: [tool(`${level}-tool`)],
          }
        : {};
    const directory = scratch.write({
      'suite.yaml': { include: ['outer.yaml'], ...settingsAt('root') },
      'outer.yaml': { include: ['nested/inner.yaml'], ...settingsAt('outer') },
      'nested/inner.yaml': {
        ...settingsAt('inner'),
        cases: [{ id: 'deep', ...settingsAt('case'), turns: [{ input: 'q', scorers: [{ type: 'faithfulness', groundTruth: 'Facts.' }] }] }],
      },
    });
    const [resolved] = (await resolveJson(directory)).cases;
    const level = (['case', 'inner', 'outer', 'root'] as const).find((candidate) => set.has(candidate));
    const source = level && { case: 'case', inner: 'file:nested/inner.yaml', outer: 'file:outer.yaml', root: 'root' }[level];
    const expectSetting = (actual: unknown, value: unknown) =>
      expect(actual).toEqual(level ? { source, value } : { source: 'none', value: null });
    expectSetting(resolved.dataModels, [{ space: level, externalId: 'Model', version: 'v1' }]);
    expectSetting(resolved.instanceSpaces, [`${level}-space`]);
    expectSetting(resolved.appContext, `Context of ${level}.`);
    expectSetting(resolved.turns[0].scorers[0].tools, [tool(`${level}-tool`)]);
  });
});

describe('cases', () => {
  const directory = () =>
    scratch.write({
      'suite.yaml': {
        include: ['outer.yaml', 'second.json'],
        cases: [{ id: 'root-case', tags: ['root-tag'], turns: [{ input: 'q' }] }],
      },
      'outer.yaml': {
        tags: ['outer'],
        include: ['inner.yaml'],
        cases: [{ id: 'outer-case', expectPass: false, turns: [{ input: 'q' }] }],
      },
      'inner.yaml': {
        tags: ['shared', 'inner'],
        cases: [{ id: 'inner-case', tags: ['own', 'shared'], expectPass: true, turns: [{ input: 'q' }] }],
      },
      'second.json': { cases: [{ id: 'json-case', turns: [{ input: 'q' }, { input: 'r', scorers: [{ type: 'toolSelection' }] }] }] },
    });

  it('come root first, then each included file depth first', async () => {
    const { cases } = await resolveJson(directory());
    expect(cases.map((entry) => [entry.id, entry.file])).toEqual([
      ['root-case', 'suite.yaml'],
      ['outer-case', 'outer.yaml'],
      ['inner-case', 'inner.yaml'],
      ['json-case', 'second.json'],
    ]);
  });

  it('carry their own tags plus the file-level tags of the file that holds them, once each', async () => {
    const byId = Object.fromEntries((await resolveJson(directory())).cases.map((entry) => [entry.id, entry])) as Record<string, ResolvedCase>;
    expect(byId['root-case'].tags).toEqual(['root-tag']);
    expect(byId['outer-case'].tags).toEqual(['outer']);
    expect(byId['inner-case'].tags).toEqual(['own', 'shared', 'inner']);
    expect(byId['json-case'].tags).toEqual([]);
  });

  it('expect to pass unless they say otherwise', async () => {
    const { cases } = await resolveJson(directory());
    expect(cases.map((entry) => entry.expectPass)).toEqual([true, false, true, true]);
  });

  it('list turns without scorers with an empty scorer list', async () => {
    const { cases } = await resolveJson(directory());
    expect(cases[3].turns).toEqual([
      { input: 'q', scorers: [] },
      { input: 'r', scorers: [{ type: 'toolSelection', tools: { source: 'none', value: null } }] },
    ]);
  });
});
