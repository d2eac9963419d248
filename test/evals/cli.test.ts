/**
 * `strata evals` end to end, in-process: exit statuses, where output goes, the table format, agent files
 * and command-line mistakes.
 */
import { describe, expect, it } from 'vitest';
import type { ResolvedSuite } from '../../src/evals/resolve.js';
import { fixture, runEvals } from './support.js';

describe('exit status', () => {
  it('is 0 for a valid suite, 1 for an invalid one, 2 when a file cannot be read', async () => {
    expect((await runEvals('validate', fixture('valid'))).code).toBe(0);
    expect((await runEvals('validate', fixture('root-tags'))).code).toBe(1);
    expect((await runEvals('validate', fixture('include-missing'))).code).toBe(2);
    expect((await runEvals('validate', fixture('valid', 'absent.yaml'))).code).toBe(2);
  });

  it('is the same for resolve, which reports problems on stderr and prints nothing else', async () => {
    const invalid = await runEvals('resolve', fixture('duplicate-ids'));
    expect(invalid).toMatchObject({ code: 1, stdout: '' });
    expect(invalid.stderr).toContain('suite.yaml:5:9: cases[1].id: duplicate case id "pump-status"');
    expect(await runEvals('resolve', fixture('include-missing'))).toMatchObject({ code: 2, stdout: '' });
  });
});

describe('resolve', () => {
  it('prints JSON by default', async () => {
    const run = await runEvals('resolve', fixture('valid'));
    expect(run.code).toBe(0);
    const resolved = JSON.parse(run.stdout) as ResolvedSuite;
    expect(resolved.suite).toBe('suite.yaml');
    expect(resolved.cases.map((entry) => entry.id)).toEqual(['greeting', 'pump-status', 'pump-history', 'pump-unknown', 'alarm-count']);
  });

  it('prints a table with --format table, naming where each setting came from', async () => {
    const run = await runEvals('resolve', fixture('valid'), '--format=table', '--agent', 'operator');
    expect(run.code).toBe(0);
    const block = run.stdout.split('\n\n').find((text) => text.startsWith('case pump-unknown'));
    expect(block).toBe(
      [
        'case pump-unknown  (fragments/pumps/negative.yaml)',
        '  expectPass      false',
        '  tags            negative',
        '  dataModels      plant:Pumps/v2  (from file:fragments/pumps/negative.yaml)',
        '  instanceSpaces  plant-a, plant-a-pumps  (from file:fragments/pumps.yaml)',
        '  appContext      "Operators of plant A ask about its equipment."  (from root)',
        '  turn 1          "What is the status of pump Z-999?"',
        '    correctness     criteria: "States that pump Z-999 exists and is running."; tools: find_asset  (from root)',
      ].join('\n'),
    );
    expect(run.stdout.startsWith('suite suite.yaml, agent operator.agent.yaml: 5 cases\n')).toBe(true);
  });

  it('uses the agent file only where no level sets tools', async () => {
    const toolSources = async (...options: string[]) => {
      const resolved = JSON.parse((await runEvals('resolve', ...options)).stdout) as ResolvedSuite;
      return resolved.cases.flatMap((entry) => entry.turns.flatMap((turn) => turn.scorers.map((scorer) => scorer.tools.source)));
    };
    expect(await toolSources(fixture('agents'))).toEqual(['none']);
    expect(await toolSources(fixture('agents'), '--agent', 'helper')).toEqual(['agent:helper.agent.yaml']);
    expect(await toolSources(fixture('valid'), '--agent', 'operator')).toEqual(['root', 'root', 'scorer', 'case', 'root', 'root']);
  });

  it('checks the agent file', async () => {
    const broken = await runEvals('resolve', fixture('agents'), '--agent', 'broken');
    expect(broken).toMatchObject({ code: 1, stdout: '' });
    expect(broken.stderr.split('\n').slice(0, 3)).toEqual([
      'broken.agent.yaml:3:5: tools[0]: missing required property "description"',
      'broken.agent.yaml:4:11: tools[1].name: expected at least 1 character, got an empty string',
      'broken.agent.yaml:6:5: tools[1]: unknown property "parameters" (allowed: name, description)',
    ]);
    const toolless = await runEvals('resolve', fixture('agents'), '--agent', 'toolless');
    expect(toolless.stderr).toMatch(/^toolless\.agent\.yaml:1:1: top level: missing required property "tools"\n/);
    const malformed = await runEvals('resolve', fixture('agents'), '--agent', 'malformed');
    expect(malformed).toMatchObject({ code: 1 });
    expect(malformed.stderr).toMatch(/^malformed\.agent\.yaml:2:1: malformed YAML: /);
  });

  it('needs an agent file that exists, named without directories', async () => {
    const missing = await runEvals('resolve', fixture('agents'), '--agent', 'nobody');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^nobody\.agent\.yaml: cannot read the agent file: file not found\n/);
    const escaping = await runEvals('resolve', fixture('agents'), '--agent', '../valid/operator');
    expect(escaping.code).toBe(2);
    expect(escaping.stderr).toMatch(/an agent name is a file name stem, without directories/);
  });
});

describe('command line', () => {
  it.each([
    [['lint', 'x'], 'unknown subcommand "lint"'],
    [[], 'unknown subcommand ""'],
    [['validate'], 'missing PATH'],
    [['validate', 'a', 'b'], 'expected one PATH, got 2'],
    [['validate', 'a', '--agent', 'x'], 'unknown option --agent'],
    [['resolve', 'a', '--format', 'xml'], '--format must be one of: json, table'],
    [['resolve', 'a', '--agent'], '--agent needs a value'],
  ])('%j is refused with status 2', async (args, reason) => {
    const run = await runEvals(...args);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(new RegExp(`^strata evals: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n\nusage: strata evals validate PATH`));
  });

  it('prints usage on help', async () => {
    const run = await runEvals('help');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^usage: strata evals validate PATH\n {7}strata evals resolve PATH \[--agent NAME\] \[--format json\|table\]\n/);
  });
});
