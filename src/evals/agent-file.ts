/**
 * `<name>.agent.yaml` in the evaluation directory: the local agent definition whose tools are the last
 * resort of tool resolution.
 */
import { diagnosticAt, fileDiagnostics, sortDiagnostics, type Diagnostic } from './diagnostics.js';
import { resolveInside } from './evaluation-directory.js';
import { parseSource, readText } from './source-file.js';
import { checkAgentFile } from './suite-schema.js';
import type { AgentFile } from './suite-types.js';

export interface LoadedAgent {
  /** File name, relative to the evaluation directory. */
  path: string;
  definition: AgentFile;
}

export interface AgentCheck {
  diagnostics: Diagnostic[];
  /** Present only when there are no diagnostics. */
  agent?: LoadedAgent;
}

export function loadAgentFile(directory: string, name: string): AgentCheck {
  const path = `${name}.agent.yaml`;
  const unreadable = (message: string): AgentCheck => ({ diagnostics: fileDiagnostics(path, [{ message }], true) });
  if (name === '' || /[/\\]/.test(name)) return unreadable('an agent name is a file name stem, without directories');
  const target = resolveInside(directory, path);
  if (!target.ok) return unreadable(target.reason);
  const text = readText(target.absolute);
  if (!text.ok) return unreadable(`cannot read the agent file: ${text.reason}`);
  const parsed = parseSource(text.text, path);
  if (!parsed.ok) return { diagnostics: fileDiagnostics(path, parsed.problems) };
  const { data, locate } = parsed.source;
  const diagnostics = sortDiagnostics(
    checkAgentFile(data).map((problem) => diagnosticAt(path, locate, problem)),
    [path],
  );
  return diagnostics.length > 0 ? { diagnostics } : { diagnostics, agent: { path, definition: data as AgentFile } };
}
