/**
 * Suites that would crash or stall a careless reader: nesting thousands of levels deep, a named pipe or a
 * directory where a file is expected, files past the size limit, too many files. Each gets a located
 * message and a non-zero exit status, never a stack trace and never a wait.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_NESTING } from '../../src/evals/nesting.js';
import { MAX_FILE_BYTES } from '../../src/evals/source-file.js';
import { MAX_SUITE_BYTES, MAX_SUITE_FILES } from '../../src/evals/suite-loader.js';
import { runEvals, Scratch } from './support.js';

const scratch = new Scratch();
afterAll(() => scratch.dispose());

const DEPTH = 200_000;
const NESTING = new RegExp(`: malformed (JSON|YAML): mappings \\(objects\\) and lists nest more than ${MAX_NESTING} levels deep here, the most a suite file may\\n1 problem`);

/** Runs `validate`; the output must be diagnostics, not a stack trace. */
async function validate(path: string) {
  const run = await runEvals('validate', path);
  expect(`${run.stdout}${run.stderr}`).not.toMatch(/RangeError|Maximum call stack|\n\s+at /);
  return run;
}

function mkfifo(path: string): boolean {
  try {
    execFileSync('mkfifo', [path]);
    return true;
  } catch {
    return false;
  }
}

describe('deep nesting', () => {
  it(`is refused in a ${DEPTH}-deep JSON suite, at the first level too many`, async () => {
    const directory = scratch.write({ 'suite.json': `{"cases": ${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}` });
    const run = await validate(join(directory, 'suite.json'));
    expect(run.code).toBe(1);
    // The root object is level 1 and the list of cases level 2: the 64th bracket opens level 65.
    expect(run.stdout).toMatch(new RegExp(`^suite\\.json:1:${11 + MAX_NESTING - 1}${NESTING.source}`));
  });

  it.each([
    ['flow lists', `cases: ${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}\n`],
    ['block lists on one line', `cases:\n${'- '.repeat(DEPTH)}x\n`],
    ['indented mappings', Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n') + ' x\n'],
    ['mixed flow and block', `cases:\n${Array.from({ length: 40 }, (_, i) => `${'  '.repeat(i)}- k:`).join('\n')} ${'{a: '.repeat(DEPTH)}1${'}'.repeat(DEPTH)}\n`],
  ])('is refused in a deep YAML suite (%s)', async (_kind, text) => {
    const directory = scratch.write({ 'suite.yaml': text });
    const run = await validate(directory);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`^suite\\.yaml:\\d+:\\d+${NESTING.source}`));
  });

  it('leaves ordinary nesting alone, in fragments too', async () => {
    const nested = (depth: number): unknown => (depth === 0 ? 'leaf' : { k: nested(depth - 1) });
    const directory = scratch.write({
      'suite.yaml': { include: ['fragment.yaml'], cases: [{ id: 'a', turns: [{ input: 'hi', scorers: [{ type: 'toolSelection', tools: [{ name: 't', description: 'd' }] }] }] }] },
      'fragment.yaml': `cases:\n  - id: b\n    turns:\n      - input: "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["\n`,
      'other.yaml': { deep: nested(MAX_NESTING - 2) },
    });
    expect(await validate(directory)).toMatchObject({ code: 0 });
    expect((await validate(join(directory, 'other.yaml'))).stdout).not.toMatch(/nest more than/);
  });
});

describe('what is read', () => {
  it('refuses a named pipe where an include points, without waiting for a writer', async (context) => {
    const directory = scratch.write({ 'suite.yaml': { include: ['pipe.yaml'], cases: [] } });
    if (!mkfifo(join(directory, 'pipe.yaml'))) return context.skip();
    const run = await validate(directory);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/^suite\.yaml:2:5: include\[0\]: cannot read "pipe\.yaml": is a named pipe \(FIFO\), not a regular file\n/);
    const root = await validate(join(directory, 'pipe.yaml'));
    expect(root).toMatchObject({ code: 2 });
    expect(root.stdout).toMatch(/^pipe\.yaml: cannot read the file: is a named pipe \(FIFO\), not a regular file/);
  });

  it('refuses a directory where an include points', async () => {
    const directory = scratch.write({ 'suite.yaml': { include: ['fragments'], cases: [] } });
    mkdirSync(join(directory, 'fragments'));
    const run = await validate(directory);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/include\[0\]: cannot read "fragments": is a directory, not a regular file/);
  });

  it(`refuses a file larger than ${MAX_FILE_BYTES} bytes`, async () => {
    const directory = scratch.write({ 'suite.yaml': { include: ['big.yaml'], cases: [] }, 'big.yaml': `# ${'x'.repeat(MAX_FILE_BYTES)}\ncases: []\n` });
    const run = await validate(directory);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(new RegExp(`^suite\\.yaml:2:5: include\\[0\\]: cannot read "big\\.yaml": is larger than ${MAX_FILE_BYTES} bytes, the limit\\n`));
  });

  it(`reads at most ${MAX_SUITE_FILES} files, and says so once`, async () => {
    const names = Array.from({ length: MAX_SUITE_FILES + 5 }, (_, i) => `f${i}.yaml`);
    const directory = scratch.write({ 'suite.yaml': { include: names, cases: [] }, ...Object.fromEntries(names.map((n) => [n, 'cases: []\n'])) });
    const run = await validate(directory);
    expect(run.code).toBe(2);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^suite\\.yaml:\\d+:\\d+: include\\[${MAX_SUITE_FILES - 1}\\]: cannot read "f${MAX_SUITE_FILES - 1}\\.yaml": the suite already has ${MAX_SUITE_FILES} files, the most it may have$`)),
      expect.stringMatching(/^1 problem/),
    ]);
  });

  it(`reads at most ${MAX_SUITE_BYTES} bytes in all`, async () => {
    const per = MAX_FILE_BYTES - 1024;
    const count = Math.ceil(MAX_SUITE_BYTES / per);
    const names = Array.from({ length: count }, (_, i) => `f${i}.yaml`);
    const big = `# ${'x'.repeat(per - 16)}\ncases: []\n`;
    const directory = scratch.write({ 'suite.yaml': { include: names, cases: [] } });
    for (const name of names) writeFileSync(join(directory, name), big);
    const run = await validate(directory);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(new RegExp(`cannot read "f${count - 1}\\.yaml": the suite's files would together exceed ${MAX_SUITE_BYTES} bytes, the limit\\n1 problem`));
  });
});
