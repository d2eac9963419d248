/**
 * `strata evals validate PATH`, `strata evals resolve PATH [--agent NAME] [--format json|table]` and
 * `strata evals run PATH --agent EXTERNALID [--project P] [--url URL] [--format table|json]`. Output goes
 * through writer callbacks so tests can run the commands in-process.
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadAgentFile } from './agent-file.js';
import { EXIT_CANNOT_CHECK, EXIT_VALID, exitCodeFor, formatDiagnostic, type Diagnostic } from './diagnostics.js';
import { isOutside, locateRootFile, ROOT_FILE_NAMES } from './evaluation-directory.js';
import { resolveSuite } from './resolve.js';
import { renderResolvedTable } from './resolved-table.js';
import { renderRunTable, runSuite, type ApiCall } from './run.js';
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
       strata evals run PATH --agent EXTERNALID [--project P] [--url URL] [--format table|json]

PATH is a suite file, or an evaluation directory holding exactly one of ${ROOT_FILE_NAMES.join(', ')}.
The directory of the suite file is the evaluation directory: included files and NAME.agent.yaml are
read from it, and paths in messages are relative to it.

validate  reports every problem of the suite and of each file it includes
resolve   prints each case as it will run (JSON by default): settings, tags, expectPass, and for every
          scorer the tool list in force and where it came from; --agent NAME supplies the tools of
          NAME.agent.yaml where no level of the suite sets any

run       runs every case against the agent EXTERNALID of a running Strata (--url, else STRATA_URL, else
          http://localhost:4000; project P, else dev), with the token in STRATA_TOKEN, and scores it;
          correctness and faithfulness are judged by the server's language model, or not judged
          without one; tools no level sets come from EXTERNALID.agent.yaml if there is one, else from
          the agent. Progress goes to stderr, the report (a table, or JSON) to stdout

exit status: 0 valid (run: every case met its expectation), 1 the suite breaks the format (run: a case
did not meet its expectation), 2 a file cannot be read, the server cannot be used, or the command is wrong
`;

const FORMATS = ['json', 'table'] as const;
type Format = (typeof FORMATS)[number];

export async function runEvalsCommand(args: string[], output: CommandOutput = processOutput, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === 'help' || subcommand === '--help' || subcommand === '-h') {
    output.stdout(USAGE);
    return EXIT_VALID;
  }
  if (subcommand !== 'validate' && subcommand !== 'resolve' && subcommand !== 'run') {
    return commandError(output, `unknown subcommand ${JSON.stringify(subcommand ?? '')}`);
  }
  const parsed = parseArguments(rest, OPTIONS[subcommand] as readonly string[]);
  if (!parsed.ok) return commandError(output, parsed.reason);
  if (subcommand === 'run') return run(parsed.path, parsed.options, output, env);
  return subcommand === 'validate' ? validate(parsed.path, output) : resolve(parsed.path, parsed.options, output);
}

const OPTIONS = { validate: [], resolve: ['--agent', '--format'], run: ['--agent', '--project', '--url', '--format'] } as const;

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

async function run(path: string, options: Map<string, string>, output: CommandOutput, env: NodeJS.ProcessEnv): Promise<number> {
  const format = options.get('--format') ?? 'table';
  if (!isFormat(format)) return commandError(output, `--format must be one of: ${FORMATS.join(', ')}`);
  const agent = options.get('--agent');
  if (agent === undefined) return commandError(output, 'run needs --agent EXTERNALID, the agent to run the suite against');
  const token = env.STRATA_TOKEN;
  if (!token) return commandError(output, 'run needs an access token in STRATA_TOKEN (for example: export STRATA_TOKEN=$(strata token))', false);
  const location = locateRootFile(path);
  if (!location.ok) return commandError(output, location.reason, false);
  const check = loadSuite(location.directory, location.rootFile);
  if (!check.suite || check.diagnostics.length > 0) {
    output.stderr(`${describeProblems(check.diagnostics, location.directory)}nothing was run\n`);
    return exitCodeFor(check.diagnostics);
  }
  const project = options.get('--project') ?? 'dev';
  const base = `${(options.get('--url') ?? env.STRATA_URL ?? 'http://localhost:4000').replace(/\/+$/, '')}/api/v1/projects/${encodeURIComponent(project)}`;
  const call: ApiCall = async (method, apiPath, body, headers = {}) => {
    const res = await fetch(`${base}${apiPath}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: kept as text, for the messages.
    }
    return { status: res.status, body: parsed };
  };
  let found;
  try {
    found = await call('POST', '/ai/agents/byids', { items: [{ externalId: agent }], ignoreUnknownIds: true }, { 'cdf-version': 'beta' });
  } catch (err) {
    return commandError(output, `cannot reach the server at ${base}: ${(err as Error).message}`, false);
  }
  if (found.status !== 200) return commandError(output, `the server at ${base} refused to read the agent: ${JSON.stringify(found.body)}`, false);
  if ((found.body as { items: unknown[] }).items.length === 0) return commandError(output, `there is no agent "${agent}" in the project ${project}`, false);
  // Tools no level of the suite sets come from EXTERNALID.agent.yaml when there is one, else from the agent itself.
  const agentCheck = existsSync(join(location.directory, `${agent}.agent.yaml`)) ? loadAgentFile(location.directory, agent) : undefined;
  if (agentCheck && agentCheck.diagnostics.length > 0) {
    output.stderr(`${describeProblems(agentCheck.diagnostics, location.directory)}nothing was run\n`);
    return exitCodeFor(agentCheck.diagnostics);
  }
  const served = (found.body as { items: Array<{ tools?: Array<{ name: string; description: string }> }> }).items[0];
  const fallback = agentCheck?.agent ?? { path: `${agent} (the agent's own tools)`, definition: { tools: (served.tools ?? []).map(({ name, description }) => ({ name, description })) } };
  const resolved = resolveSuite(check.suite, fallback);
  let report;
  try {
    report = await runSuite({ ...resolved, suite: shownPath(join(location.directory, location.rootFile)) }, { agent, project, call, progress: output.stderr });
  } catch (err) {
    return commandError(output, `the run stopped: cannot reach the server at ${base}: ${(err as Error).message}`, false);
  }
  output.stdout(format === 'table' ? renderRunTable(report) : `${JSON.stringify(report, null, 2)}\n`);
  return report.totals.notMet === 0 ? EXIT_VALID : EXIT_NOT_MET;
}

/** A run whose cases did not all meet their expectation. */
const EXIT_NOT_MET = 1;

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

