/**
 * `strata evals resolve --format table`: the resolved suite as text for a person to read, one block per
 * case, each setting followed by where it came from.
 */
import type { Resolved, ResolvedCase, ResolvedScorer, ResolvedSuite } from './resolve.js';
import type { DataModelReference, Tool } from './suite-types.js';
import { plural } from './wording.js';

const LABEL_WIDTH = 16;

export function renderResolvedTable(resolved: ResolvedSuite): string {
  const heading = `suite ${resolved.suite}` + (resolved.agent ? `, agent ${resolved.agent}` : '') + `: ${plural(resolved.cases.length, 'case')}`;
  return [heading, ...resolved.cases.map(renderCase)].join('\n\n') + '\n';
}

function renderCase(entry: ResolvedCase): string {
  const lines = [
    `case ${entry.id}  (${entry.file})`,
    row('expectPass', String(entry.expectPass)),
    row('tags', entry.tags.length > 0 ? entry.tags.join(', ') : '-'),
    row('dataModels', withSource(entry.dataModels, (models) => models.map(dataModelLabel).join(', '))),
    row('instanceSpaces', withSource(entry.instanceSpaces, (spaces) => spaces.join(', '))),
    row('appContext', withSource(entry.appContext, (text) => JSON.stringify(text))),
  ];
  entry.turns.forEach((turn, index) => {
    lines.push(row(`turn ${index + 1}`, JSON.stringify(turn.input)));
    if (turn.scorers.length === 0) lines.push(`    (no scorers)`);
    for (const scorer of turn.scorers) lines.push(`    ${scorer.type.padEnd(LABEL_WIDTH)}${scorerDetail(scorer)}`);
  });
  return lines.join('\n');
}

function scorerDetail(scorer: ResolvedScorer): string {
  const toolNames = (list: Tool[]) => (list.length > 0 ? list.map((tool) => tool.name).join(', ') : '(empty list)');
  const tools = `tools: ${withSource(scorer.tools, toolNames)}`;
  if (scorer.criteria !== undefined) return `criteria: ${JSON.stringify(scorer.criteria)}; ${tools}`;
  if (scorer.groundTruth !== undefined) return `groundTruth: ${JSON.stringify(scorer.groundTruth)}; ${tools}`;
  return tools;
}

function row(label: string, value: string): string {
  return `  ${label.padEnd(LABEL_WIDTH)}${value}`;
}

function withSource<T>(resolved: Resolved<T>, show: (value: T) => string): string {
  return resolved.value === null ? '- (not set)' : `${show(resolved.value)}  (from ${resolved.source})`;
}

function dataModelLabel(model: DataModelReference): string {
  return `${model.space}:${model.externalId}/${model.version}`;
}
