/**
 * Helpers for the evaluation suite tests: suites written to throwaway directories, and the `strata evals`
 * command run in-process with its output captured.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { runEvalsCommand } from '../../src/evals/cli.js';
import type { Diagnostic } from '../../src/evals/diagnostics.js';
import { loadSuite } from '../../src/evals/suite-loader.js';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

export function fixture(...parts: string[]): string {
  return join(FIXTURES, ...parts);
}

/** File name -> contents; a non-string value is written as YAML (or as JSON for a `.json` name). */
export type SuiteFiles = Record<string, unknown>;

/** A scratch area holding many small suites; each `write` gets its own directory. */
export class Scratch {
  private readonly base = mkdtempSync(join(tmpdir(), 'strata-evals-'));
  private next = 0;

  write(files: SuiteFiles): string {
    const directory = join(this.base, String(this.next++));
    for (const [name, contents] of Object.entries(files)) {
      const path = join(directory, name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, serialise(name, contents));
    }
    mkdirSync(directory, { recursive: true });
    return directory;
  }

  dispose(): void {
    rmSync(this.base, { recursive: true, force: true });
  }
}

function serialise(name: string, contents: unknown): string {
  if (typeof contents === 'string') return contents;
  return name.endsWith('.json') ? JSON.stringify(contents, null, 2) : stringify(contents);
}

export function diagnosticsOf(directory: string, rootFile = 'suite.yaml'): Diagnostic[] {
  return loadSuite(directory, rootFile).diagnostics;
}

export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runEvals(...args: string[]): Promise<CommandRun> {
  let stdout = '';
  let stderr = '';
  const code = await runEvalsCommand(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}
