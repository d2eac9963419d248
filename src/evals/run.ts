/**
 * `strata evals run`: every case of a suite (as `strata evals resolve` shows it) against an agent of a
 * running Strata, through its chat API, turn by turn in one conversation per case, and each turn's
 * scorers applied to what the agent answered and which tools it called. The judge of `correctness` and
 * `faithfulness` is the server's language model, asked through its OpenAI-compatible route.
 */
import type { ResolvedCase, ResolvedSuite } from './resolve.js';
import { judged, toolInvocation, toolSelection, type CalledTool, type Judge, type ScorerResult } from './scorers.js';
import { plural } from './wording.js';

/** How the runner reaches the server: a project-scoped call returning status and parsed body. */
export type ApiCall = (method: 'GET' | 'POST', path: string, body: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: unknown }>;

export type CaseVerdict = 'pass' | 'fail' | 'not judged' | 'error';

export interface TurnResult {
  input: string;
  answer: string | null;
  toolCalls: CalledTool[];
  scorers: ScorerResult[];
}

export interface CaseResult {
  id: string;
  file: string;
  expectPass: boolean;
  /** pass: every judged scorer passed; fail: one did not; not judged: no scorer could be judged; error: the chat failed. */
  verdict: CaseVerdict;
  /** Whether the verdict is what the case expects (pass, or fail when `expectPass` is false). */
  met: boolean;
  error?: string;
  turns: TurnResult[];
}

export interface RunReport {
  suite: string;
  agent: string;
  project: string;
  cases: CaseResult[];
  totals: { cases: number; met: number; notMet: number; notJudged: number; errors: number };
}

const BETA = { 'cdf-version': 'beta' };
const ALPHA = { 'cdf-version': 'alpha' };

class ChatFailed extends Error {}

const errorText = (res: { status: number; body: unknown }) => (res.body as { error?: { message?: string } })?.error?.message ?? `HTTP ${res.status}`;

/** The judge: the server's model through POST /ai/openai/chat/completions; undefined when it has none (503). */
export function serverJudge(call: ApiCall): Judge {
  return async ({ system, user }) => {
    const res = await call('POST', '/ai/openai/chat/completions', { messages: [{ role: 'system', content: system }, { role: 'user', content: user }] }, ALPHA);
    if (res.status === 503) return undefined;
    if (res.status !== 200) throw new Error(errorText(res));
    const content = (res.body as { choices?: Array<{ message?: { content?: unknown } }> })?.choices?.[0]?.message?.content;
    return typeof content === 'string' ? content : '';
  };
}

interface AgentMessage {
  content?: { text?: string } | Array<{ text?: string }>;
  reasoning?: Array<{ data?: Array<{ type: string; toolCall?: { name: string; input?: unknown } }> }>;
  actions?: Array<{ clientTool?: { name: string; arguments?: string } }>;
}

function answerOf(messages: AgentMessage[]): { answer: string | null; toolCalls: CalledTool[] } {
  const texts: string[] = [];
  const toolCalls: CalledTool[] = [];
  for (const m of messages) {
    for (const part of Array.isArray(m.content) ? m.content : m.content ? [m.content] : []) if (typeof part.text === 'string') texts.push(part.text);
    for (const r of m.reasoning ?? []) for (const d of r.data ?? []) if (d.type === 'toolCall' && d.toolCall) toolCalls.push({ name: d.toolCall.name, arguments: d.toolCall.input ?? {} });
    for (const a of m.actions ?? []) if (a.clientTool) toolCalls.push({ name: a.clientTool.name, arguments: parseArguments(a.clientTool.arguments) });
  }
  return { answer: texts.length ? texts.join('\n') : null, toolCalls };
}

function parseArguments(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '{}');
  } catch {
    return text;
  }
}

async function runTurn(call: ApiCall, judge: Judge, agent: string, entry: ResolvedCase, index: number, cursor: string | undefined) {
  const turn = entry.turns[index];
  // The case's app context opens its conversation, as a text part before the first input.
  const context = index === 0 && entry.appContext.value !== null ? [{ type: 'text', text: `Context: ${entry.appContext.value}` }] : [];
  const content = [...context, { type: 'text', text: turn.input }];
  const res = await call('POST', '/ai/agents/chat', { agentExternalId: agent, messages: [{ role: 'user', content }], ...(cursor ? { cursor } : {}) }, BETA);
  if (res.status !== 200) throw new ChatFailed(`turn ${index + 1}: the chat answered ${res.status}: ${errorText(res)}`);
  const response = (res.body as { response: { cursor?: string; messages: AgentMessage[] } }).response;
  const { answer, toolCalls } = answerOf(response.messages ?? []);
  const scorers: ScorerResult[] = [];
  for (const scorer of turn.scorers) {
    if (scorer.type === 'toolSelection' || scorer.type === 'toolInvocation') {
      const expected = scorer.tools.value;
      if (expected === null) scorers.push({ type: scorer.type, verdict: 'not judged', reason: 'no expected tools are set at any level of the suite' });
      else scorers.push((scorer.type === 'toolSelection' ? toolSelection : toolInvocation)(expected, toolCalls));
    } else {
      scorers.push(await judged(scorer, turn.input, answer ?? '', judge));
    }
  }
  return { result: { input: turn.input, answer, toolCalls, scorers }, cursor: response.cursor };
}

export async function runCase(call: ApiCall, judge: Judge, agent: string, entry: ResolvedCase): Promise<CaseResult> {
  const turns: TurnResult[] = [];
  let cursor: string | undefined;
  const base = { id: entry.id, file: entry.file, expectPass: entry.expectPass };
  try {
    for (let i = 0; i < entry.turns.length; i++) {
      const done = await runTurn(call, judge, agent, entry, i, cursor);
      turns.push(done.result);
      cursor = done.cursor;
    }
  } catch (err) {
    if (!(err instanceof ChatFailed)) throw err;
    return { ...base, verdict: 'error', met: false, error: err.message, turns };
  }
  const verdicts = turns.flatMap((t) => t.scorers.map((s) => s.verdict)).filter((v) => v !== 'not judged');
  const verdict: CaseVerdict = verdicts.length === 0 ? 'not judged' : verdicts.every((v) => v === 'pass') ? 'pass' : 'fail';
  const met = verdict === 'pass' ? entry.expectPass : verdict === 'fail' ? !entry.expectPass : false;
  return { ...base, verdict, met, turns };
}

export async function runSuite(
  resolved: ResolvedSuite,
  options: { agent: string; project: string; call: ApiCall; judge?: Judge; progress?: (text: string) => void },
): Promise<RunReport> {
  const judge = options.judge ?? serverJudge(options.call);
  const cases: CaseResult[] = [];
  for (const [i, entry] of resolved.cases.entries()) {
    options.progress?.(`[${i + 1}/${resolved.cases.length}] ${entry.id} (${plural(entry.turns.length, 'turn')}) ...`);
    const result = await runCase(options.call, judge, options.agent, entry);
    cases.push(result);
    options.progress?.(` ${result.verdict}${result.met ? '' : ' (expectation not met)'}\n`);
  }
  const count = (test: (c: CaseResult) => boolean) => cases.filter(test).length;
  return {
    suite: resolved.suite,
    agent: options.agent,
    project: options.project,
    cases,
    totals: { cases: cases.length, met: count((c) => c.met), notMet: count((c) => !c.met), notJudged: count((c) => c.verdict === 'not judged'), errors: count((c) => c.verdict === 'error') },
  };
}

/** The report for a person: one line per case, each scorer's verdict and reason under it, then totals. */
export function renderRunTable(report: RunReport): string {
  const width = Math.max(4, ...report.cases.map((c) => c.id.length)) + 2;
  const lines = [`suite ${report.suite}, agent ${report.agent}, project ${report.project}`, '', `${'CASE'.padEnd(width)}${'EXPECT'.padEnd(8)}${'VERDICT'.padEnd(12)}MET`];
  for (const c of report.cases) {
    lines.push(`${c.id.padEnd(width)}${(c.expectPass ? 'pass' : 'fail').padEnd(8)}${c.verdict.padEnd(12)}${c.met ? 'yes' : 'no'}`);
    if (c.error) lines.push(`    ${c.error}`);
    c.turns.forEach((t, i) => {
      for (const s of t.scorers) lines.push(`    turn ${i + 1} ${s.type.padEnd(16)}${s.verdict.padEnd(12)}${s.reason}`);
    });
  }
  const t = report.totals;
  lines.push('', `${plural(t.cases, 'case')}: ${t.met} met ${t.met === 1 ? 'its' : 'their'} expectation, ${t.notMet} did not (${t.notJudged} not judged, ${plural(t.errors, 'error')})`);
  return `${lines.join('\n')}\n`;
}
