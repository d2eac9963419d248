/**
 * The AI tools: documents ask and summarize over files' text (text files and PDFs) through the configured
 * model, within the caller's scope; the OpenAI-compatible pass-through (alpha channel); and the scripted
 * model (`STRATA_LLM_URL=script:FILE`) driving an agent's chat with tool calls.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { startHarnessWithLlm, type LlmServer } from './support/llm-server.js';
import { onePagePdf } from './support/pdf.js';

const ALPHA = { 'cdf-version': '20230101-alpha' };
const BETA = { 'cdf-version': '20230101-beta' };
const CLIENTS = [{ clientId: 'scoped', clientSecret: 'scoped-secret', groups: ['scoped'] }];
let h: Harness;
let llm: LlmServer;

async function fileWith(h: Harness, file: Record<string, unknown>, content: Buffer | string): Promise<number> {
  const created = await h.post('/files', file);
  expect(created.status).toBe(201);
  const { pathname, search } = new URL(created.body.uploadUrl);
  expect((await h.strata.app.inject({ method: 'PUT', url: pathname + search, payload: content })).statusCode).toBe(200);
  return created.body.id;
}

beforeAll(async () => {
  ({ h, llm } = await startHarnessWithLlm({ STRATA_CLIENTS: JSON.stringify(CLIENTS) }));
});
afterAll(() => h.close());

describe('documents', () => {
  let ds: number;
  beforeAll(async () => {
    ds = (await h.post('/datasets', { items: [{ externalId: 'docs' }] })).body.items[0].id;
    await fileWith(h, { externalId: 'manual', name: 'manual.txt', mimeType: 'text/plain', dataSetId: ds }, 'The pump P-101 needs oil every 500 hours.');
    await fileWith(h, { externalId: 'sheet', name: 'sheet.pdf', mimeType: 'application/pdf' }, onePagePdf('Pump P-101 runs at 50 Hz'));
    await fileWith(h, { externalId: 'blob', name: 'blob.bin' }, Buffer.from([0, 1, 2, 3, 255]));
    await fileWith(h, { externalId: 'broken', name: 'broken.pdf' }, Buffer.from('%PDF-1.4\nnot really a PDF'));
  });

  it('answers a question from text and PDF files, naming them as references', async () => {
    llm.requests.length = 0;
    llm.respond = () => ({ content: 'Every 500 hours, at 50 Hz.' });
    const res = await h.post('/ai/tools/documents/ask', { question: 'How often is P-101 oiled?', fileIds: [{ externalId: 'manual' }, { externalId: 'sheet' }] });
    expect(res.status).toBe(200);
    expect(res.body.content[0].text).toBe('Every 500 hours, at 50 Hz.');
    expect(res.body.content[0].references.map((r: { fileName: string }) => r.fileName)).toEqual(['manual.txt', 'sheet.pdf']);
    const told = llm.requests[0].messages[0].content!;
    expect(told).toContain('needs oil every 500 hours');
    expect(told).toContain('Pump P-101 runs at 50 Hz');
    expect(llm.requests[0].messages[1].content).toBe('How often is P-101 oiled?');
  });

  it('summarizes each file', async () => {
    llm.respond = (req) => ({ content: req.messages[1].content!.includes('50 Hz') ? 'A data sheet.' : 'A manual.' });
    const res = await h.post('/ai/tools/documents/summarize', { items: [{ externalId: 'manual' }, { externalId: 'sheet' }] });
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      { externalId: 'manual', summary: 'A manual.' },
      { externalId: 'sheet', summary: 'A data sheet.' },
    ]);
  });

  it('refuses files that are missing, unless told to ignore them, and files that are neither text nor PDF', async () => {
    llm.respond = () => ({ content: 'ok' });
    expect((await h.post('/ai/tools/documents/summarize', { items: [{ externalId: 'ghost' }] })).status).toBe(400);
    const ignored = await h.post('/ai/tools/documents/summarize', { items: [{ externalId: 'ghost' }, { externalId: 'manual' }], ignoreUnknownIds: true });
    expect(ignored.body.items.map((i: { externalId: string }) => i.externalId)).toEqual(['manual']);
    expect(errorMessage(await h.post('/ai/tools/documents/summarize', { items: [{ externalId: 'blob' }] }), 400)).toMatch(/items\[0\]: the file is neither text nor a PDF/);
    expect(errorMessage(await h.post('/ai/tools/documents/summarize', { items: [{ externalId: 'broken' }] }), 400)).toMatch(/items\[0\]: the file is not a PDF whose text can be read/);
    expect(errorMessage(await h.post('/ai/tools/documents/ask', { question: '', fileIds: [{ id: 1 }] }), 400)).toMatch(/question/);
  });

  it("reads only the files the caller's scope reaches", async () => {
    await createGroup(h, { name: 'scoped', sourceId: 'scoped', capabilities: [capability('filesAcl', ['READ'], { datasetScope: { ids: [ds] } })] });
    const token = await clientToken(h, 'scoped', 'scoped-secret');
    llm.respond = () => ({ content: 'summary' });
    const inScope = await h.request('POST', '/ai/tools/documents/summarize', { items: [{ externalId: 'manual' }] }, bearer(token));
    expect(inScope.status).toBe(200);
    const outside = await h.request('POST', '/ai/tools/documents/summarize', { items: [{ externalId: 'sheet' }] }, bearer(token));
    const absent = await h.request('POST', '/ai/tools/documents/summarize', { items: [{ externalId: 'ghost' }] }, bearer(token));
    expect(outside.status).toBe(400);
    expect(JSON.stringify(outside.body).replace(/sheet/g, 'X')).toBe(JSON.stringify(absent.body).replace(/ghost/g, 'X'));
  });
});

describe('OpenAI-compatible pass-through', () => {
  it('passes chat completions and the model list to the configured model (alpha channel)', async () => {
    llm.respond = () => ({ content: 'pong' });
    const res = await h.request('POST', '/ai/openai/chat/completions', { messages: [{ role: 'user', content: 'ping' }] }, ALPHA);
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('pong');
    expect(llm.requests.at(-1)!.model).toBe('test-model');
    const models = await h.request('GET', '/ai/openai/models', undefined, ALPHA);
    expect(models.body.data[0].id).toBe('test-model');
    expect(errorMessage(await h.request('GET', '/ai/openai/models', undefined, BETA), 400)).toMatch(/alpha/);
  });

  it('answers 502 when the model cannot be reached, and 503 when none is configured', async () => {
    const down = await startHarness({}, { STRATA_LLM_URL: 'http://127.0.0.1:9/v1', STRATA_OUTBOUND_ALLOW: 'loopback' });
    const bare = await startHarness();
    try {
      expect(errorMessage(await down.request('GET', '/ai/openai/models', undefined, ALPHA), 502)).toMatch(/language model/);
      expect(errorMessage(await bare.request('GET', '/ai/openai/models', undefined, ALPHA), 503)).toMatch(/STRATA_LLM_URL/);
      expect(errorMessage(await bare.post('/ai/tools/documents/ask', { question: 'q', fileIds: [{ id: 1 }] }), 503)).toMatch(/STRATA_LLM_URL/);
    } finally {
      await down.close();
      await bare.close();
    }
  });

  it('does not call a model on an address the outbound policy forbids', async () => {
    const closed = await startHarness({}, { STRATA_LLM_URL: llm.url });
    try {
      expect(errorMessage(await closed.request('GET', '/ai/openai/models', undefined, ALPHA), 502)).toMatch(/address policy/);
    } finally {
      await closed.close();
    }
  });
});

describe('scripted model', () => {
  it('answers and calls tools as its YAML file says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-script-'));
    const file = join(dir, 'model.yaml');
    writeFileSync(
      file,
      [
        'rules:',
        '  - role: user',
        '    match: "count.*events"',
        '    toolCalls:',
        '      - name: rest',
        '        arguments: { method: POST, path: /events/aggregate, body: {} }',
        '  - role: tool',
        '    answer: "Counted."',
        '  - answer: "I only count events."',
      ].join('\n'),
    );
    const s = await startHarness({}, { STRATA_LLM_URL: `script:${file}` });
    try {
      expect((await s.request('POST', '/ai/agents', { items: [{ externalId: 'counter', name: 'Counter', tools: [{ type: 'callRestApi', name: 'rest', description: 'API' }] }] }, BETA)).status).toBe(200);
      const chat = (text: string) => s.request('POST', '/ai/agents/chat', { agentExternalId: 'counter', messages: [{ role: 'user', content: { type: 'text', text } }] }, BETA);
      const counted = await chat('Please count the events');
      expect(counted.status).toBe(200);
      expect(counted.body.response.messages[0].content.text).toBe('Counted.');
      expect(counted.body.response.messages[0].reasoning[0].data[0].toolCall).toMatchObject({ name: 'rest', result: { status: 200, result: { items: [{ count: 0 }] } } });
      expect((await chat('Hello')).body.response.messages[0].content.text).toBe('I only count events.');
    } finally {
      await s.close();
    }
  });

  it('refuses a script that is not one when the server starts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-script-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'rules:\n  - match: "("\n    answer: x\n');
    await expect(startHarness({}, { STRATA_LLM_URL: `script:${file}` })).rejects.toThrow(/rules\[0\]\.match/);
    await expect(startHarness({}, { STRATA_LLM_URL: `script:${join(dir, 'absent.yaml')}` })).rejects.toThrow(/cannot be read/);
  });
});
