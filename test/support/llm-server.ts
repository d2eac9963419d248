/**
 * A small OpenAI-compatible chat-completions server for tests: it answers each completion with what the
 * test's `respond` gives for the request (text, tool calls, or both) and keeps every request it was sent,
 * so a test sees what the model was told (the tool results among the messages).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BuildOptions } from '../../src/app.js';
import { startHarness, type Harness } from './harness.js';

export interface LlmRequest {
  model?: string;
  messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
  tools?: Array<{ type: 'function'; function: { name: string; description: string; parameters: unknown } }>;
}

export interface LlmReply {
  content?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

export interface LlmServer {
  /** The base URL to configure as STRATA_LLM_URL. */
  url: string;
  requests: LlmRequest[];
  /** What the next completions answer; the test sets it before each exchange. */
  respond: (request: LlmRequest) => LlmReply;
  close(): Promise<void>;
}

export async function startLlmServer(): Promise<LlmServer> {
  let calls = 0;
  const llm: LlmServer = {
    url: '',
    requests: [],
    respond: () => ({ content: 'no answer scripted' }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model', owned_by: 'test' }] }));
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.statusCode = 404;
        res.end('{}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LlmRequest;
      llm.requests.push(body);
      const reply = llm.respond(body);
      const toolCalls = (reply.toolCalls ?? []).map((c) => ({ id: `call_${++calls}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
      const message = { role: 'assistant', content: reply.content ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
      res.end(JSON.stringify({ id: `cmpl_${calls}`, object: 'chat.completion', model: body.model, choices: [{ index: 0, message, finish_reason: toolCalls.length ? 'tool_calls' : 'stop' }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  llm.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return llm;
}

/** The settings of a harness whose language model is `llm`. */
export const llmEnv = (llm: LlmServer) => ({ STRATA_LLM_URL: llm.url, STRATA_LLM_MODEL: 'test-model', STRATA_OUTBOUND_ALLOW: 'loopback' });

/** A harness whose language model is a fresh test server (with `env` besides); closing the harness closes both. */
export async function startHarnessWithLlm(env: Record<string, string> = {}, build: BuildOptions = {}): Promise<{ h: Harness; llm: LlmServer }> {
  const llm = await startLlmServer();
  const h = await startHarness({}, { ...llmEnv(llm), ...env }, build);
  return {
    llm,
    h: {
      ...h,
      async close() {
        await h.close();
        await llm.close();
      },
    },
  };
}
