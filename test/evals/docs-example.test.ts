/** The example in docs/evals.md is a valid suite, and the resolve output shown there is what it prints. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { runEvals, Scratch } from './support.js';

const docs = readFileSync(fileURLToPath(new URL('../../docs/evals.md', import.meta.url)), 'utf8');
const scratch = new Scratch();
afterAll(() => scratch.dispose());

it('resolves the documented example as documented', async () => {
  const files = Object.fromEntries(
    [...docs.matchAll(/`evals\/pumps\/([^`]+)`:\n\n```yaml\n([\s\S]*?)```/g)].map(([, name, text]) => [name, text]),
  );
  expect(Object.keys(files)).toEqual(['suite.yaml', 'fragments/pumps.yaml', 'operator.agent.yaml']);
  const directory = scratch.write(files);
  const shown = /\$ strata evals resolve evals\/pumps --agent operator --format table\n([\s\S]*?)```/.exec(docs)?.[1];
  const run = await runEvals('resolve', directory, '--agent', 'operator', '--format', 'table');
  expect(run).toEqual({ code: 0, stdout: shown, stderr: '' });
});
