/**
 * The scorers of an evaluation run. `toolSelection` and `toolInvocation` compare the tools the agent called
 * with the expected tools, deterministically; `correctness` and `faithfulness` ask a judge (the server's
 * language model), and are not judged when there is none.
 */
import type { ResolvedScorer } from './resolve.js';
import type { Tool } from './suite-types.js';

export interface CalledTool {
  name: string;
  /** The arguments as the agent gave them (an object when they were one). */
  arguments: unknown;
}

export type ScorerVerdict = 'pass' | 'fail' | 'not judged';

export interface ScorerResult {
  type: ResolvedScorer['type'];
  verdict: ScorerVerdict;
  reason: string;
}

/** Asks the judge; undefined when there is no judge to ask. Throws when the judge fails. */
export type Judge = (prompt: { system: string; user: string }) => Promise<string | undefined>;

const names = (tools: readonly { name: string }[]) => (tools.length ? tools.map((t) => t.name).join(', ') : 'none');

/**
 * Passes when the agent called every expected tool and no other: the reason names what was missing and
 * what was not expected.
 */
export function toolSelection(expected: readonly Tool[], called: readonly CalledTool[]): ScorerResult {
  const calledNames = new Set(called.map((c) => c.name));
  const expectedNames = new Set(expected.map((t) => t.name));
  const missing = [...expectedNames].filter((n) => !calledNames.has(n));
  const unexpected = [...calledNames].filter((n) => !expectedNames.has(n));
  const problems = [missing.length ? `did not call ${missing.join(', ')}` : '', unexpected.length ? `called ${unexpected.join(', ')}, which ${unexpected.length === 1 ? 'is' : 'are'} not expected` : ''].filter(Boolean);
  return problems.length
    ? { type: 'toolSelection', verdict: 'fail', reason: `${problems.join('; ')} (expected ${names(expected)})` }
    : { type: 'toolSelection', verdict: 'pass', reason: `called ${names(expected)}, as expected` };
}

/**
 * Passes when every expected tool was called with an object of arguments each of whose names the tool's
 * description mentions (the description is where a suite states a tool's parameters).
 */
export function toolInvocation(expected: readonly Tool[], called: readonly CalledTool[]): ScorerResult {
  const problems: string[] = [];
  for (const tool of expected) {
    const calls = called.filter((c) => c.name === tool.name);
    if (calls.length === 0) {
      problems.push(`did not call ${tool.name}`);
      continue;
    }
    const good = calls.some((c) => typeof c.arguments === 'object' && c.arguments !== null && !Array.isArray(c.arguments) && Object.keys(c.arguments).every((k) => mentions(tool.description, k)));
    if (!good) {
      const shown = calls.map((c) => JSON.stringify(c.arguments)).join(', ');
      problems.push(`called ${tool.name} with ${shown}: arguments its description does not name`);
    }
  }
  return problems.length
    ? { type: 'toolInvocation', verdict: 'fail', reason: problems.join('; ') }
    : { type: 'toolInvocation', verdict: 'pass', reason: `called ${names(expected)} with arguments their descriptions name` };
}

function mentions(description: string, word: string): boolean {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_])${escaped}([^A-Za-z0-9_]|$)`).test(description);
}

const JUDGE_SYSTEM =
  'You judge the answer of an AI agent. Reply with one JSON object and nothing else: {"pass": true or false, "reason": "one sentence"}.';

/** `correctness` (against the case's criteria) or `faithfulness` (against its ground truth), by the judge. */
export async function judged(scorer: ResolvedScorer, input: string, answer: string, judge: Judge): Promise<ScorerResult> {
  const { type } = scorer;
  const user =
    type === 'correctness'
      ? `Question: ${input}\n\nAnswer: ${answer}\n\nDoes the answer meet these criteria? ${scorer.criteria}`
      : `Question: ${input}\n\nAnswer: ${answer}\n\nIs every statement of the answer grounded in these facts, without contradicting them? ${scorer.groundTruth}`;
  let reply: string | undefined;
  try {
    reply = await judge({ system: JUDGE_SYSTEM, user });
  } catch (err) {
    return { type, verdict: 'not judged', reason: `the judge failed: ${(err as Error).message}` };
  }
  if (reply === undefined) return { type, verdict: 'not judged', reason: 'no language model is configured on the server to judge with' };
  const verdict = verdictOf(reply);
  if (!verdict) return { type, verdict: 'not judged', reason: `the judge answered something other than a verdict: ${JSON.stringify(reply.slice(0, 200))}` };
  return { type, verdict: verdict.pass ? 'pass' : 'fail', reason: verdict.reason };
}

/** The judge's `{pass, reason}`, also when it wraps it in prose or a code fence. */
function verdictOf(reply: string): { pass: boolean; reason: string } | undefined {
  const text = reply.slice(reply.indexOf('{'), reply.lastIndexOf('}') + 1);
  try {
    const parsed = JSON.parse(text) as { pass?: unknown; reason?: unknown };
    if (typeof parsed.pass !== 'boolean') return undefined;
    return { pass: parsed.pass, reason: typeof parsed.reason === 'string' ? parsed.reason : '' };
  } catch {
    return undefined;
  }
}
