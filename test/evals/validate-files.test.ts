/**
 * `strata evals validate` on the fixtures: includes (nested, cycles, missing, outside the directory,
 * twice), duplicate case ids, root-level tags, malformed YAML and JSON, and which file is the root.
 */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnosticsOf, fixture, runEvals, Scratch } from './support.js';

const scratch = new Scratch();
afterAll(() => scratch.dispose());

/** The problem lines of a validate run, without the closing count. */
async function problems(path: string): Promise<{ code: number; lines: string[]; summary: string }> {
  const run = await runEvals('validate', path);
  const lines = run.stdout.trimEnd().split('\n');
  return { code: run.code, lines: lines.slice(0, -1), summary: lines[lines.length - 1] };
}

describe('validate', () => {
  it('accepts a suite with nested includes, a JSON fragment and every scorer', async () => {
    const run = await runEvals('validate', fixture('valid'));
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/valid\/suite\.yaml: valid \(4 files, 5 cases\)\n$/);
  });

  it('reports include cycles, also back to the root file', async () => {
    expect(await problems(fixture('include-cycle'))).toMatchObject({
      code: 1,
      lines: [
        'b.yaml:1:11: include[0]: include cycle: a.yaml -> b.yaml -> a.yaml',
        'back-to-root.yaml:1:11: include[0]: include cycle: suite.yaml -> back-to-root.yaml -> suite.yaml',
      ],
    });
  });

  it('reports a missing included file with exit status 2, and still checks the rest', async () => {
    const result = await problems(fixture('include-missing'));
    expect(result).toMatchObject({
      code: 2,
      lines: [
        'suite.yaml:2:5: include[0]: cannot read "fragments/typo.yaml": file not found',
        'suite.yaml:5:12: cases[0].turns: expected at least 1 item, got an empty list',
      ],
    });
    expect(result.summary).toMatch(/^2 problems \(paths are relative to .*include-missing\)$/);
  });

  it('refuses paths that leave the evaluation directory', async () => {
    expect(await problems(fixture('include-escape'))).toMatchObject({
      code: 1,
      lines: [
        'suite.yaml:2:5: include[0]: "../valid/suite.yaml" is outside the evaluation directory',
        'suite.yaml:3:5: include[1]: "fragments/../../valid/fragments/alarms.json" is outside the evaluation directory',
        'suite.yaml:4:5: include[2]: expected a path relative to the evaluation directory, got the absolute path "/etc/hostname"',
      ],
    });
  });

  it('refuses a symbolic link that leads outside the evaluation directory', () => {
    const outside = scratch.write({ 'elsewhere.yaml': { cases: [] } });
    const directory = scratch.write({ 'suite.yaml': { include: ['linked.yaml'] } });
    symlinkSync(join(outside, 'elsewhere.yaml'), join(directory, 'linked.yaml'));
    expect(diagnosticsOf(directory).map((d) => d.message)).toEqual([
      '"linked.yaml" is outside the evaluation directory (through a symbolic link)',
    ]);
  });

  it('reports a file included twice at its second include', async () => {
    expect(await problems(fixture('include-twice'))).toMatchObject({
      code: 1,
      lines: ['right.yaml:1:11: include[0]: "shared/common.yaml" is already included at left.yaml:1:11; a file can be included only once'],
    });
  });

  it('reports case ids used twice, within a file and across files', async () => {
    expect(await problems(fixture('duplicate-ids'))).toMatchObject({
      code: 1,
      lines: [
        'suite.yaml:5:9: cases[1].id: duplicate case id "pump-status" (first used at suite.yaml:3:9)',
        'more.yaml:4:9: cases[1].id: duplicate case id "pump-status" (first used at suite.yaml:3:9)',
      ],
    });
  });

  it('refuses file-level tags in the root file', async () => {
    expect(await problems(fixture('root-tags'))).toMatchObject({
      code: 1,
      lines: ['suite.yaml:2:1: top level: file-level "tags" are allowed in included files only, not in the root file'],
    });
  });

  it('reports malformed YAML and JSON with line and column', async () => {
    expect(await problems(fixture('bad-yaml'))).toMatchObject({
      code: 1,
      lines: [
        'broken.yaml:4:16: malformed YAML: Nested mappings are not allowed in compact mappings',
        'broken.json:3:50: malformed JSON: expected a string in double quotes, found "}"',
      ],
    });
  });

  it('reports a malformed root file, a second document and a duplicate key', () => {
    const malformed = (text: string) => diagnosticsOf(scratch.write({ 'suite.yaml': text }));
    expect(malformed('cases:\n  - id: a\n   turns: []\n')).toEqual([
      { file: 'suite.yaml', position: { line: 3, column: 1 }, message: 'malformed YAML: Sequence item without - indicator' },
    ]);
    expect(malformed('cases: []\n---\ncases: []\n')[0]).toMatchObject({
      position: { line: 2, column: 1 },
      message: 'malformed YAML: a file holds one document, but a second one starts here',
    });
    expect(malformed('cases: []\ncases: []\n')[0]).toMatchObject({
      position: { line: 2, column: 1 },
      message: 'malformed YAML: the same key appears twice in this mapping',
    });
  });

  it('wants the top level to be a mapping', () => {
    expect(diagnosticsOf(scratch.write({ 'suite.yaml': '' }))).toEqual([
      { file: 'suite.yaml', position: undefined, path: [], message: 'expected a mapping (object), got null' },
    ]);
    expect(diagnosticsOf(scratch.write({ 'suite.yaml': '- a\n- b\n' }))[0]).toMatchObject({
      position: { line: 1, column: 1 },
      message: 'expected a mapping (object), got a list of 2 items',
    });
  });
});

describe('the root file', () => {
  it.each(['suite.yaml', 'suite.yml', 'suite.json'])('is %s when the directory holds only that one', async (name) => {
    const directory = scratch.write({ [name]: { cases: [{ id: 'a', turns: [{ input: 'q' }] }] } });
    const run = await runEvals('validate', directory);
    expect(run).toMatchObject({ code: 0, stdout: `${join(directory, name)}: valid (1 file, 1 case)\n` });
  });

  it('is the file named, whatever its name, and its directory is the evaluation directory', async () => {
    const directory = scratch.write({ 'pumps.suite.yaml': { include: ['part.yaml'] }, 'part.yaml': { cases: [] } });
    const run = await runEvals('validate', join(directory, 'pumps.suite.yaml'));
    expect(run).toMatchObject({ code: 0, stdout: `${join(directory, 'pumps.suite.yaml')}: valid (2 files, 0 cases)\n` });
  });

  it('must be unambiguous', async () => {
    const run = await runEvals('validate', fixture('two-roots'));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/two-roots: more than one suite file \(suite\.yaml, suite\.json\); name the one to use\n$/);
  });

  it('must exist', async () => {
    const empty = await runEvals('validate', fixture('no-root'));
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no-root: no suite file in this directory \(looked for suite\.yaml, suite\.yml, suite\.json\)\n$/);
    const missing = await runEvals('validate', fixture('no-such-dir'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no-such-dir: no such file or directory\n$/);
  });
});
