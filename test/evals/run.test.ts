/**
 * `strata evals run` against a running Strata whose language model the test scripts: each case's turns go
 * through the agent chat, the agent's tool calls run through the API, and the scorers judge what came back
 * (tool scorers by comparing, correctness by the server's model as judge). A suite that does not validate
 * runs nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvalsCommand } from '../../src/evals/cli.js';
import type { RunReport } from '../../src/evals/run.js';
import { runSuite } from '../../src/evals/run.js';
import { toolInvocation, toolSelection } from '../../src/evals/scorers.js';
import type { Harness } from '../support/harness.js';
import { startHarnessWithLlm, type LlmRequest, type LlmServer } from '../support/llm-server.js';
import { Scratch } from './support.js';

let h: Harness;
let llm: LlmServer;
let url: string;
const scratch = new Scratch();

const SUITE = {
  'suite.yaml': {
    tools: [{ name: 'rest', description: 'Calls the project API; parameters method, path and body.' }],
    cases: [
      {
        id: 'count-events',
        turns: [{ input: 'How many events are there?', scorers: [{ type: 'toolSelection' }, { type: 'toolInvocation' }, { type: 'correctness', criteria: 'Gives the number of events.' }] }],
      },
      { id: 'greeting', expectPass: false, turns: [{ input: 'Hello', scorers: [{ type: 'toolSelection' }] }] },
      { id: 'two-turns', turns: [{ input: 'Hello' }, { input: 'And again', scorers: [{ type: 'faithfulness', groundTruth: 'The agent greets.' }] }] },
    ],
  },
};

/** The agent's model, and the judge: both are the server's model, told apart by the judge's system prompt. */
function respond(req: LlmRequest) {
  const first = req.messages[0].content ?? '';
  if (first.startsWith('You judge')) return { content: '```json\n{"pass": true, "reason": "The answer does."}\n```' };
  const last = req.messages[req.messages.length - 1];
  if (last.role === 'tool') return { content: `There are ${JSON.parse(last.content!).result.items[0].count} events.` };
  if (/events/.test(last.content ?? '')) return { toolCalls: [{ name: 'rest', arguments: { method: 'POST', path: '/events/aggregate', body: {} } }] };
  return { content: 'Hello!' };
}

async function run(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runEvalsCommand(['run', ...args], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) }, { STRATA_TOKEN: h.token });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  ({ h, llm } = await startHarnessWithLlm());
  url = await h.strata.app.listen({ host: '127.0.0.1', port: 0 });
  const agent = { externalId: 'helper', name: 'Helper', tools: [{ type: 'callRestApi', name: 'rest', description: 'Calls the project API' }] };
  expect((await h.request('POST', '/ai/agents', { items: [agent] }, { 'cdf-version': 'beta' })).status).toBe(200);
  expect((await h.post('/events', { items: [{ externalId: 'e1' }, { externalId: 'e2' }] })).status).toBe(201);
});
afterAll(async () => {
  await h.close();
  scratch.dispose();
});

describe('evals run', () => {
  it('runs every case through the chat and scores it; exit 0 when every case meets its expectation', async () => {
    llm.respond = respond;
    const res = await run(scratch.write(SUITE), '--agent', 'helper', '--url', url, '--format', 'json');
    expect(res.stderr).toContain('[1/3] count-events (1 turn) ... pass');
    expect(res.stderr).toContain('[2/3] greeting (1 turn) ... fail');
    const report = JSON.parse(res.stdout) as RunReport;
    expect(report.cases.map((c) => [c.id, c.verdict, c.met])).toEqual([
      ['count-events', 'pass', true],
      ['greeting', 'fail', true],
      ['two-turns', 'pass', true],
    ]);
    const [counted] = report.cases[0].turns;
    expect(counted.answer).toBe('There are 2 events.');
    expect(counted.toolCalls).toEqual([{ name: 'rest', arguments: { method: 'POST', path: '/events/aggregate', body: {} } }]);
    expect(counted.scorers.map((s) => s.verdict)).toEqual(['pass', 'pass', 'pass']);
    expect(report.cases[1].turns[0].scorers[0].reason).toMatch(/did not call rest/);
    expect(report.totals).toEqual({ cases: 3, met: 3, notMet: 0, notJudged: 0, errors: 0 });
    expect(res.code).toBe(0);
  });

  it('prints a table by default, and exits 1 when a case does not meet its expectation', async () => {
    llm.respond = (req) => (req.messages[0].content!.startsWith('You judge') ? { content: '{"pass": false, "reason": "No number given."}' } : respond(req));
    const res = await run(scratch.write(SUITE), '--agent', 'helper', '--url', url);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^count-events\s+pass\s+fail\s+no$/m);
    expect(res.stdout).toMatch(/turn 1 correctness\s+fail\s+No number given\./);
    expect(res.stdout).toContain('3 cases: 1 met its expectation, 2 did not (0 not judged, 0 errors)');
  });

  it("takes the tools no level of the suite sets from the agent's own tools, or from EXTERNALID.agent.yaml", async () => {
    llm.respond = respond;
    const suite = { cases: [{ id: 'count', turns: [{ input: 'How many events are there?', scorers: [{ type: 'toolSelection' }] }] }] };
    llm.requests.length = 0;
    const own = JSON.parse((await run(scratch.write({ 'suite.yaml': { ...suite, appContext: 'Plant A.' } }), '--agent', 'helper', '--url', url, '--format', 'json')).stdout) as RunReport;
    expect(llm.requests[0].messages[1]).toEqual({ role: 'user', content: 'Context: Plant A.\nHow many events are there?' });
    expect(own.cases[0].turns[0].scorers[0]).toMatchObject({ verdict: 'pass', reason: 'called rest, as expected' });
    const local = { 'suite.yaml': suite, 'helper.agent.yaml': { tools: [{ name: 'search', description: 'Searches' }] } };
    const fromFile = JSON.parse((await run(scratch.write(local), '--agent', 'helper', '--url', url, '--format', 'json')).stdout) as RunReport;
    expect(fromFile.cases[0].turns[0].scorers[0]).toMatchObject({ verdict: 'fail', reason: expect.stringMatching(/did not call search/) });
  });

  it('reports a suite that does not validate and runs nothing', async () => {
    llm.requests.length = 0;
    const res = await run(scratch.write({ 'suite.yaml': { cases: [{ id: 'x', turns: [] }] } }), '--agent', 'helper', '--url', url);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cases\[0\]\.turns/);
    expect(res.stderr).toContain('nothing was run');
    expect(res.stdout).toBe('');
    expect(llm.requests).toHaveLength(0);
  });

  it('refuses an agent that does not exist, a missing token, and an unreachable server', async () => {
    const dir = scratch.write(SUITE);
    expect(await run(dir, '--agent', 'ghost', '--url', url)).toMatchObject({ code: 2, stderr: expect.stringContaining('no agent "ghost"') });
    const noToken = await runEvalsCommand(['run', dir, '--agent', 'helper', '--url', url], { stdout: () => {}, stderr: () => {} }, {});
    expect(noToken).toBe(2);
    expect(await run(dir, '--agent', 'helper', '--url', 'http://127.0.0.1:9')).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot reach') });
  });

  it('reports a chat that fails as an error of its case', async () => {
    llm.respond = () => ({ toolCalls: [{ name: 'rest', arguments: { method: 'GET', path: '/events' } }] });
    const res = await run(scratch.write(SUITE), '--agent', 'helper', '--url', url, '--format', 'json');
    const report = JSON.parse(res.stdout) as RunReport;
    expect(report.cases[0]).toMatchObject({ verdict: 'error', met: false, error: expect.stringMatching(/turn 1: the chat answered 502/) });
    expect(res.code).toBe(1);
  });
});

describe('scorers', () => {
  it('leaves correctness and faithfulness not judged without a judge', async () => {
    llm.respond = respond;
    const suite = { suite: 's', agent: null, cases: [] as never[] };
    const call = async (method: 'GET' | 'POST', path: string, body: unknown, headers?: Record<string, string>) => {
      const res = await h.request(method, path, body, headers);
      return { status: res.status, body: res.body };
    };
    const resolved = {
      ...suite,
      cases: [
        {
          id: 'c',
          file: 'suite.yaml',
          tags: [],
          expectPass: true,
          dataModels: { source: 'none' as const, value: null },
          instanceSpaces: { source: 'none' as const, value: null },
          appContext: { source: 'none' as const, value: null },
          turns: [{ input: 'Hello', scorers: [{ type: 'correctness' as const, criteria: 'Greets', tools: { source: 'none' as const, value: null } }] }],
        },
      ],
    };
    const report = await runSuite(resolved, { agent: 'helper', project: 'dev', call, judge: async () => undefined });
    expect(report.cases[0]).toMatchObject({ verdict: 'not judged', met: false });
    expect(report.cases[0].turns[0].scorers[0].reason).toMatch(/no language model/);
    expect(report.totals.notJudged).toBe(1);
  });

  it('compares tool names, and the argument names the descriptions give', () => {
    const tools = [{ name: 'read', description: 'Reads one asset; parameter externalId.' }];
    expect(toolSelection(tools, [{ name: 'read', arguments: {} }]).verdict).toBe('pass');
    expect(toolSelection(tools, [{ name: 'read', arguments: {} }, { name: 'write', arguments: {} }]).reason).toMatch(/called write, which is not expected/);
    expect(toolInvocation(tools, [{ name: 'read', arguments: { externalId: 'p1' } }]).verdict).toBe('pass');
    expect(toolInvocation(tools, [{ name: 'read', arguments: { id: 1 } }]).reason).toMatch(/called read with \{"id":1\}/);
    expect(toolInvocation(tools, [{ name: 'read', arguments: 'text' }]).verdict).toBe('fail');
  });
});
