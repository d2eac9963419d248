/**
 * Agents (beta channel): create-or-update, list, by ids, delete, the tool kinds an agent may have; and the
 * chat, against a language model server the test scripts, so the whole loop runs: chat request, model, tool
 * call through the API with the caller's rights, model, answer. Client actions go back to the caller and
 * their results continue the conversation under its cursor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { startHarnessWithLlm, type LlmServer } from './support/llm-server.js';

const BETA = { 'cdf-version': '20230101-beta' };
const CLIENTS = [{ clientId: 'scoped', clientSecret: 'scoped-secret', groups: ['scoped'] }];
let h: Harness;
let llm: LlmServer;
const post = (path: string, body: unknown, headers: Record<string, string> = {}) => h.request('POST', path, body, { ...BETA, ...headers });
const get = (path: string, headers: Record<string, string> = {}) => h.request('GET', path, undefined, { ...BETA, ...headers });

const restTool = { type: 'callRestApi', name: 'rest', description: 'Calls the project API' };
const agent = (externalId: string, extra: Record<string, unknown> = {}) => ({ externalId, name: `Agent ${externalId}`, ...extra });

beforeAll(async () => {
  ({ h, llm } = await startHarnessWithLlm({ STRATA_CLIENTS: JSON.stringify(CLIENTS) }));
});
afterAll(() => h.close());

describe('agents', () => {
  it('creates, updates, lists, retrieves and deletes an agent', async () => {
    const created = await post('/ai/agents', { items: [agent('a1', { description: 'first', instructions: 'Be brief', labels: ['published'], tools: [restTool] })] });
    expect(created.status).toBe(200);
    const item = created.body.items[0];
    expect(item).toMatchObject({ externalId: 'a1', name: 'Agent a1', description: 'first', runtimeVersion: '1.0.0', labels: ['published'], tools: [restTool] });
    expect(typeof item.ownerId).toBe('string');
    expect(item.id).toBeUndefined();

    const updated = await post('/ai/agents', { items: [agent('a1', { description: 'second' })] });
    expect(updated.body.items[0]).toMatchObject({ description: 'second', createdTime: item.createdTime });
    expect(updated.body.items[0].instructions).toBeUndefined();
    // What was not given is left out, as the Python SDK expects when it compares an agent with what it wrote.
    expect(updated.body.items[0].labels).toBeUndefined();

    expect((await get('/ai/agents')).body.items.map((a: { externalId: string }) => a.externalId)).toContain('a1');
    const byIds = await post('/ai/agents/byids', { items: [{ externalId: 'a1' }] });
    expect(byIds.body.items[0]).toMatchObject({ externalId: 'a1', description: 'second' });
    expect((await post('/ai/agents/ids', { items: [{ externalId: 'a1' }] })).body.items).toHaveLength(1);
    expect(errorMessage(await post('/ai/agents/byids', { items: [{ externalId: 'nope' }] }), 400)).toMatch(/not found|missing|nope/i);

    expect((await post('/ai/agents/delete', { items: [{ externalId: 'a1' }] })).status).toBe(200);
    expect((await post('/ai/agents/byids', { items: [{ externalId: 'a1' }], ignoreUnknownIds: true })).body.items).toEqual([]);
  });

  it('holds requests to the items the clients send at once', async () => {
    expect(errorMessage(await post('/ai/agents', { items: [agent('x1'), agent('x2')] }), 400)).toMatch(/items/);
    expect(errorMessage(await post('/ai/agents/delete', { items: [{ externalId: 'x1' }, { externalId: 'x2' }] }), 400)).toMatch(/items/);
    const many = Array.from({ length: 101 }, (_, i) => ({ externalId: `a${i}` }));
    expect(errorMessage(await post('/ai/agents/byids', { items: many }), 400)).toMatch(/items/);
    expect(errorMessage(await post('/ai/agents', { items: [agent('x'.repeat(129))] }), 400)).toMatch(/items\[0\]\.externalId/);
  });

  it('is a beta operation', async () => {
    expect(errorMessage(await h.request('GET', '/ai/agents'), 400)).toMatch(/beta/);
  });

  it('refuses an unknown tool kind, naming it, and a tool name given twice', async () => {
    const unknown = await post('/ai/agents', { items: [agent('bad', { tools: [restTool, { type: 'teleport', name: 't', description: 'd' }] })] });
    expect(errorMessage(unknown, 400)).toMatch(/items\[0\]\.tools\[1\]\.type: unknown tool kind "teleport"/);
    const twice = await post('/ai/agents', { items: [agent('bad', { tools: [restTool, restTool] })] });
    expect(errorMessage(twice, 400)).toMatch(/items\[0\]\.tools\[1\]\.name/);
    const kg = await post('/ai/agents', { items: [agent('bad', { tools: [{ type: 'queryKnowledgeGraph', name: 'kg', description: 'd' }] })] });
    expect(errorMessage(kg, 400)).toMatch(/configuration\.dataModels/);
    expect((await post('/ai/agents/byids', { items: [{ externalId: 'bad' }], ignoreUnknownIds: true })).body.items).toEqual([]);
  });
});

describe('chat', () => {
  beforeAll(async () => {
    expect((await post('/ai/agents', { items: [agent('helper', { instructions: 'Answer from the data', tools: [restTool] })] })).status).toBe(200);
    expect((await h.post('/datasets', { items: [{ externalId: 'ds-a' }, { externalId: 'ds-b' }] })).status).toBe(200);
  });

  it('runs a tool the model calls through the API and answers with its reasoning', async () => {
    expect((await h.post('/events', { items: [{ externalId: 'chat-e1', description: 'pump tripped' }] })).status).toBe(201);
    llm.respond = (req) => {
      const last = req.messages[req.messages.length - 1];
      if (last.role === 'user') return { toolCalls: [{ name: 'rest', arguments: { method: 'POST', path: '/events/byids', body: { items: [{ externalId: 'chat-e1' }] } } }] };
      return { content: `The event says: ${JSON.parse(last.content!).result.items[0].description}` };
    };
    llm.requests.length = 0;
    const res = await post('/ai/agents/chat', { agentExternalId: 'helper', messages: [{ role: 'user', content: { type: 'text', text: 'What happened?' } }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agentExternalId: 'helper', response: { type: 'result' } });
    const [message] = res.body.response.messages;
    expect(message.content).toEqual({ type: 'text', text: 'The event says: pump tripped' });
    expect(message.reasoning[0].data[0]).toMatchObject({ type: 'toolCall', toolCall: { name: 'rest', toolType: 'callRestApi', input: { path: '/events/byids' }, result: { status: 200 } } });
    expect(llm.requests[0].model).toBe('test-model');
    expect(llm.requests[0].messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Answer from the data') });
    expect(llm.requests[0].tools!.map((t) => t.function.name)).toEqual(['rest']);
    expect(typeof res.body.response.cursor).toBe('string');
  });

  it("gives a tool the caller's rights only: a data-set-scoped caller's tool does not see other data sets", async () => {
    const sets = (await h.post('/datasets/byids', { items: [{ externalId: 'ds-a' }, { externalId: 'ds-b' }] })).body.items;
    expect((await h.post('/events', { items: [{ externalId: 'in-a', dataSetId: sets[0].id }, { externalId: 'in-b', dataSetId: sets[1].id }] })).status).toBe(201);
    await createGroup(h, {
      name: 'scoped',
      sourceId: 'scoped',
      capabilities: [capability('agentsAcl', ['RUN']), { eventsAcl: { actions: ['READ'], scope: { datasetScope: { ids: [sets[0].id] } } } }],
    });
    const token = await clientToken(h, 'scoped', 'scoped-secret');
    const seen: string[] = [];
    llm.respond = (req) => {
      const last = req.messages[req.messages.length - 1];
      if (last.role === 'user') return { toolCalls: [{ name: 'rest', arguments: { method: 'POST', path: '/events/list', body: { limit: 100 } } }] };
      seen.push(...JSON.parse(last.content!).result.items.map((e: { externalId: string }) => e.externalId));
      return { content: 'done' };
    };
    const res = await post('/ai/agents/chat', { agentExternalId: 'helper', messages: [{ role: 'user', content: { type: 'text', text: 'List events' } }] }, bearer(token));
    expect(res.status).toBe(200);
    expect(seen).toEqual(['in-a']);
    // The same chat by the unscoped administrator sees both: the scope above is the caller's, not the agent's.
    seen.length = 0;
    expect((await post('/ai/agents/chat', { agentExternalId: 'helper', messages: [{ role: 'user', content: { type: 'text', text: 'List events' } }] })).status).toBe(200);
    expect(seen).toEqual(expect.arrayContaining(['in-a', 'in-b']));
  });

  it('returns client actions to the caller and continues the conversation with their results', async () => {
    llm.respond = (req) => {
      const last = req.messages[req.messages.length - 1];
      if (last.role === 'user') return { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] };
      return { content: `The sum is ${JSON.parse(last.content!).content}` };
    };
    const actions = [{ type: 'clientTool', clientTool: { name: 'add', description: 'Adds two numbers', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } } }];
    const first = await post('/ai/agents/chat', { agentExternalId: 'helper', messages: [{ role: 'user', content: { type: 'text', text: 'Add 2 and 3' } }], actions });
    expect(first.status).toBe(200);
    const [call] = first.body.response.messages[0].actions;
    expect(call).toMatchObject({ type: 'clientTool', clientTool: { name: 'add', arguments: JSON.stringify({ a: 2, b: 3 }) } });
    const cursor = first.body.response.cursor;

    const second = await post('/ai/agents/chat', {
      agentExternalId: 'helper',
      cursor,
      actions,
      messages: [{ role: 'action', type: 'clientTool', actionId: call.actionId, content: { type: 'text', text: '5' }, data: [] }],
    });
    expect(second.status).toBe(200);
    expect(second.body.response.messages[0].content.text).toBe('The sum is 5');
    expect(second.body.response.cursor).toBe(cursor);

    const again = await post('/ai/agents/chat', { agentExternalId: 'helper', cursor, messages: [{ role: 'action', type: 'clientTool', actionId: call.actionId, content: { type: 'text', text: '5' } }] });
    expect(errorMessage(again, 400)).toMatch(/messages\[0\]\.actionId: the conversation has no pending action/);
  });

  it('keeps a REST tool inside the project: a path that leaves it is refused to the model', async () => {
    const paths = ['/../other/events', '/events/%2e%2e/x', '//evil.example/x', 'http://evil.example/', '/events\\..\\x'];
    let i = 0;
    llm.respond = (req) => {
      const last = req.messages[req.messages.length - 1];
      return last.role === 'user' || i < paths.length ? { toolCalls: [{ name: 'rest', arguments: { method: 'GET', path: paths[i++] } }] } : { content: 'stopped' };
    };
    const res = await post('/ai/agents/chat', { agentExternalId: 'helper', messages: [{ role: 'user', content: { type: 'text', text: 'escape' } }] });
    expect(res.status).toBe(200);
    const results = res.body.response.messages[0].reasoning.map((r: { data: Array<{ toolCall: { result: unknown } }> }) => r.data[0].toolCall.result);
    expect(results).toHaveLength(paths.length);
    for (const result of results) expect(result).toEqual({ status: 400, error: expect.stringMatching(/^path: expected a path under the project/) });
  });

  it("sends the agent's model when the settings name none, and forgets an agent's conversations with it", async () => {
    const other = await startHarnessWithLlm({ STRATA_LLM_MODEL: '' });
    try {
      await other.h.request('POST', '/ai/agents', { items: [agent('m', { model: 'local/llama' })] }, BETA);
      other.llm.respond = () => ({ content: 'hi' });
      const first = await other.h.request('POST', '/ai/agents/chat', { agentExternalId: 'm', messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }, BETA);
      expect(other.llm.requests[0].model).toBe('local/llama');
      await other.h.request('POST', '/ai/agents/delete', { items: [{ externalId: 'm' }] }, BETA);
      await other.h.request('POST', '/ai/agents', { items: [agent('m')] }, BETA);
      const again = await other.h.request('POST', '/ai/agents/chat', { agentExternalId: 'm', cursor: first.body.response.cursor, messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }, BETA);
      expect(errorMessage(again, 400)).toMatch(/cursor: there is no conversation/);
    } finally {
      await other.h.close();
    }
  });

  it('refuses a conversation that would grow past its limit', async () => {
    llm.respond = () => ({ content: 'ok' });
    const text = (n: number) => Array.from({ length: n }, () => ({ role: 'user', content: { type: 'text', text: 'x'.repeat(100_000) } }));
    expect(errorMessage(await post('/ai/agents/chat', { agentExternalId: 'helper', messages: text(11) }), 400)).toMatch(/^messages: the conversation would hold more than 1000000 characters/);
    const first = await post('/ai/agents/chat', { agentExternalId: 'helper', messages: text(9) });
    expect(first.status).toBe(200);
    const next = await post('/ai/agents/chat', { agentExternalId: 'helper', cursor: first.body.response.cursor, messages: text(2) });
    expect(errorMessage(next, 400)).toMatch(/^cursor: the conversation would hold more than/);
  });

  it('forgets a conversation not continued for 30 days', async () => {
    let now = Date.now();
    const other = await startHarnessWithLlm({}, { now: () => now });
    try {
      await other.h.request('POST', '/ai/agents', { items: [agent('t')] }, BETA);
      other.llm.respond = () => ({ content: 'hi' });
      const say = (cursor: string, headers: Record<string, string> = {}) =>
        other.h.request('POST', '/ai/agents/chat', { agentExternalId: 't', cursor, messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }, { ...BETA, ...headers });
      const started = await other.h.request('POST', '/ai/agents/chat', { agentExternalId: 't', messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }, BETA);
      const { cursor } = started.body.response;
      now += 29 * 86_400_000;
      const { clientId, secret } = other.h.strata.idp.devClient;
      const fresh = bearer(await clientToken(other.h, clientId, secret));
      expect((await say(cursor, fresh)).status).toBe(200);
      now += 30 * 86_400_000 + 1;
      const later = bearer(await clientToken(other.h, clientId, secret));
      expect(errorMessage(await say(cursor, later), 400)).toMatch(/cursor: there is no conversation/);
    } finally {
      await other.h.close();
    }
  });

  it('queries the knowledge graph (within its configured views and spaces) and data points as the caller, giving the nodes found as the answer\'s data', async () => {
    expect((await h.post('/models/spaces', { items: [{ space: 'plant' }, { space: 'elsewhere' }] })).status).toBe(200);
    const asset = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
    const node = (space: string, externalId: string) => ({ instanceType: 'node', space, externalId, sources: [{ source: asset, properties: { name: externalId } }] });
    const nodes = [node('plant', 'pump-1'), node('plant', 'pump-2'), node('elsewhere', 'pump-x')];
    expect((await h.post('/models/instances', { items: nodes })).status).toBe(200);
    expect((await h.post('/timeseries', { items: [{ externalId: 'flow' }] })).status).toBe(201);
    expect((await h.post('/timeseries/data', { items: [{ externalId: 'flow', datapoints: [{ timestamp: 1000, value: 4.5 }] }] })).status).toBe(200);
    const kg = { type: 'queryKnowledgeGraph', name: 'kg', description: 'Finds assets', configuration: { dataModels: [{ space: 'cdf_cdm', externalId: 'CogniteCore', version: 'v1', viewExternalIds: ['CogniteAsset'] }], instanceSpaces: { type: 'manual', spaces: ['plant'] } } };
    const dp = { type: 'queryTimeSeriesDatapoints', name: 'dp', description: 'Reads data points' };
    const other = { type: 'examineDataSemantically', name: 'examine', description: 'Examines' };
    expect((await post('/ai/agents', { items: [agent('graph', { tools: [kg, dp, other] })] })).status).toBe(200);
    llm.respond = (req) => {
      const last = req.messages[req.messages.length - 1];
      if (last.role === 'user') {
        return {
          toolCalls: [
            { name: 'kg', arguments: { view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }, limit: 10 } },
            { name: 'dp', arguments: { items: [{ externalId: 'flow', start: 0, end: 2000 }] } },
            { name: 'examine', arguments: {} },
            { name: 'made_up', arguments: {} },
            { name: 'kg', arguments: { view: { space: 'cdf_cdm', externalId: 'CogniteFile', version: 'v1' } } },
          ],
        };
      }
      return { content: 'Two pumps; the flow is 4.5.' };
    };
    const res = await post('/ai/agents/chat', { agentExternalId: 'graph', messages: [{ role: 'user', content: [{ type: 'text', text: 'Which pumps, and what flow?' }] }] });
    expect(res.status).toBe(200);
    const [message] = res.body.response.messages;
    expect(message.data).toEqual([{ type: 'instances', instances: { nodes: [{ space: 'plant', externalId: 'pump-1' }, { space: 'plant', externalId: 'pump-2' }] } }]);
    const calls = message.reasoning.map((r: { data: Array<{ toolCall: Record<string, any> }> }) => r.data[0].toolCall);
    expect(calls.map((c: { toolType: string }) => c.toolType)).toEqual(['queryKnowledgeGraph', 'queryTimeSeriesDatapoints', 'examineDataSemantically', 'unknown', 'queryKnowledgeGraph']);
    expect(calls[1].result.result.items[0].datapoints).toEqual([{ timestamp: 1000, value: 4.5 }]);
    expect(calls[2].result.error).toBe('Strata does not run tools of kind examineDataSemantically');
    expect(calls[3].result.error).toBe('there is no tool named "made_up"');
    // The tool's configuration holds it to its views and instance spaces.
    expect(calls[4].result).toEqual({ status: 400, error: 'view: the tool queries the views cdf_cdm:CogniteAsset only' });
    expect(llm.requests.at(-1)!.tools!.map((t) => t.function.name)).toEqual(['kg', 'dp', 'examine']);
  });

  it('refuses more than 20 client actions', async () => {
    const actions = Array.from({ length: 21 }, (_, i) => ({ type: 'clientTool', clientTool: { name: `a${i}`, description: 'd', parameters: {} } }));
    const res = await post('/ai/agents/chat', { agentExternalId: 'helper', messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], actions });
    expect(errorMessage(res, 400)).toMatch(/actions/);
  });

  it('refuses agentId and agentExternalId that disagree, and accepts agentId alone', async () => {
    const message = [{ role: 'user', content: { type: 'text', text: 'hi' } }];
    expect(errorMessage(await post('/ai/agents/chat', { agentExternalId: 'helper', agentId: 'other', messages: message }), 400)).toMatch(/agentId.*disagrees/);
    llm.respond = () => ({ content: 'hello' });
    const res = await post('/ai/agents/chat', { agentId: 'helper', messages: message });
    expect(res.status).toBe(200);
    expect(res.body.agentExternalId).toBe('helper');
  });

  it('refuses a chat with an agent that does not exist, and a cursor of another conversation', async () => {
    const message = [{ role: 'user', content: { type: 'text', text: 'hi' } }];
    expect(errorMessage(await post('/ai/agents/chat', { agentExternalId: 'ghost', messages: message }), 404)).toMatch(/ghost/);
    expect(errorMessage(await post('/ai/agents/chat', { agentExternalId: 'helper', cursor: 'made-up', messages: message }), 400)).toMatch(/cursor/);
  });
});

it('answers 503 naming the settings when no language model is configured', async () => {
  const bare = await startHarness();
  try {
    const up = await bare.request('POST', '/ai/agents', { items: [agent('x')] }, BETA);
    expect(up.status).toBe(200);
    const res = await bare.request('POST', '/ai/agents/chat', { agentExternalId: 'x', messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }, BETA);
    expect(errorMessage(res, 503)).toMatch(/STRATA_LLM_URL/);
  } finally {
    await bare.close();
  }
});
