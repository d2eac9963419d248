/**
 * `strata evals validate PATH` and `strata evals resolve PATH [--agent NAME] [--format json|table]`.
 * Output goes through writer callbacks so tests can run the commands in-process.
 */
import { join, relative } from 'node:path';
import { loadAgentFile } from './agent-file.js';
import { EXIT_CANNOT_CHECK, EXIT_VALID, exitCodeFor, formatDiagnostic, type Diagnostic } from './diagnostics.js';
import { isOutside, locateRootFile, ROOT_FILE_NAMES } from './evaluation-directory.js';
import { resolveSuite } from './resolve.js';
import { renderResolvedTable } from './resolved-table.js';
import { loadSuite } from './suite-loader.js';
import { plural } from './wording.js';

export interface CommandOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: CommandOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

const USAGE = `usage: strata evals validate PATH
       strata evals resolve PATH [--agent NAME] [--format json|table]

PATH is a suite file, or an evaluation directory holding exactly one of ${ROOT_FILE_NAMES.join(', ')}.
The directory of the suite file is the evaluation directory: included files and NAME.agent.yaml are
read from it, and paths in messages are relative to it.

validate  reports every problem of the suite and of each file it includes
resolve   prints each case as it will run (JSON by default): settings, tags, expectPass, and for every
          scorer the tool list in force and where it came from; --agent NAME supplies the tools of
          NAME.agent.yaml where no level of the suite sets any

exit status: 0 valid, 1 the suite breaks the format, 2 a file cannot be read or the command is wrong
`;

const FORMATS = ['json', 'table'] as const;
type Format = (typeof FORMATS)[number];

export async function runEvalsCommand(args: string[], output: CommandOutput = processOutput): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === 'help' || subcommand === '--help' || subcommand === '-h') {
    output.stdout(USAGE);
    return EXIT_VALID;
  }
  if (subcommand !== 'validate' && subcommand !== 'resolve') {
    return commandError(output, `unknown subcommand ${JSON.stringify(subcommand ?? '')}`);
  }
  const parsed = parseArguments(rest, subcommand === 'resolve' ? ['--agent', '--format'] : []);
  if (!parsed.ok) return commandError(output, parsed.reason);
  return subcommand === 'validate' ? validate(parsed.path, output) : resolve(parsed.path, parsed.options, output);
}

function validate(path: string, output: CommandOutput): number {
  const location = locateRootFile(path);
  if (!location.ok) return commandError(output, location.reason, false);
  const check = loadSuite(location.directory, location.rootFile);
  if (check.diagnostics.length === 0) {
    const shown = shownPath(join(location.directory, location.rootFile));
    output.stdout(`${shown}: valid (${plural(check.files.length, 'file')}, ${plural(check.caseCount, 'case')})\n`);
    return EXIT_VALID;
  }
  output.stdout(describeProblems(check.diagnostics, location.directory));
  return exitCodeFor(check.diagnostics);
}

function resolve(path: string, options: Map<string, string>, output: CommandOutput): number {
  const format = options.get('--format') ?? 'json';
  if (!isFormat(format)) return commandError(output, `--format must be one of: ${FORMATS.join(', ')}`);
  const location = locateRootFile(path);
  if (!location.ok) return commandError(output, location.reason, false);
  const check = loadSuite(location.directory, location.rootFile);
  const agentName = options.get('--agent');
  const agentCheck = agentName === undefined ? undefined : loadAgentFile(location.directory, agentName);
  const diagnostics = [...check.diagnostics, ...(agentCheck?.diagnostics ?? [])];
  if (!check.suite || diagnostics.length > 0) {
    output.stderr(describeProblems(diagnostics, location.directory));
    return exitCodeFor(diagnostics);
  }
  const resolved = resolveSuite(check.suite, agentCheck?.agent);
  output.stdout(format === 'table' ? renderResolvedTable(resolved) : `${JSON.stringify(resolved, null, 2)}\n`);
  return EXIT_VALID;
}

function describeProblems(diagnostics: readonly Diagnostic[], directory: string): string {
  const shownDirectory = shownPath(directory);
  const frame = shownDirectory === '.' ? '' : ` (paths are relative to ${shownDirectory})`;
  const lines = diagnostics.map(formatDiagnostic);
  return `${lines.join('\n')}\n${plural(diagnostics.length, 'problem')}${frame}\n`;
}

/** Relative to the working directory when inside it, else absolute: whichever a person recognises. */
function shownPath(absolute: string): string {
  const fromHere = relative(process.cwd(), absolute);
  if (fromHere === '') return '.';
  return isOutside(fromHere) ? absolute : fromHere;
}

type ParsedArguments = { ok: true; path: string; options: Map<string, string> } | { ok: false; reason: string };

/** One positional PATH, and `--name value` or `--name=value` for the options the subcommand takes. */
function parseArguments(args: readonly string[], optionNames: readonly string[]): ParsedArguments {
  const positional: string[] = [];
  const options = new Map<string, string>();
  for (let index = 0; index < args.length; index++) {
    const argument = args[index];
    if (!argument.startsWith('--')) {
      positional.push(argument);
      continue;
    }
    const [name, inlineValue] = splitOnce(argument, '=');
    if (!optionNames.includes(name)) return { ok: false, reason: `unknown option ${name}` };
    const value = inlineValue ?? args[++index];
    if (value === undefined || value === '') return { ok: false, reason: `${name} needs a value` };
    options.set(name, value);
  }
  if (positional.length !== 1) {
    return { ok: false, reason: positional.length === 0 ? 'missing PATH' : `expected one PATH, got ${positional.length}` };
  }
  return { ok: true, path: positional[0], options };
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function isFormat(value: string): value is Format {
  return (FORMATS as readonly string[]).includes(value);
}

/** The command could not get as far as judging a suite: a wrong command line, or no suite file to read. */
function commandError(output: CommandOutput, reason: string, showUsage = true): number {
  output.stderr(`strata evals: ${reason}\n${showUsage ? `\n${USAGE}` : ''}`);
  return EXIT_CANNOT_CHECK;
}

