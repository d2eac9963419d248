/**
 * GET /openapi.json: a valid OpenAPI 3.1 document, generated from the route declarations, listing every
 * operation the server routes and nothing else, with the request schemas that validate requests.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Type } from '@sinclair/typebox';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orNull } from '../src/http/common-schemas.js';
import { route } from '../src/http/route.js';
import { startHarness, type Harness } from './support/harness.js';

type Json = Record<string, any>;

/** A test-only operation declaring every part the document reads. */
const probe = route({
  method: 'PUT',
  path: '/probes/:probeId',
  summary: 'A probe of the document',
  capability: { acl: 'probesAcl', action: 'WRITE', impliedBy: ['ADMIN'] },
  channel: 'beta',
  status: 202,
  params: Type.Object({ probeId: Type.Integer({ minimum: 1 }) }),
  query: Type.Object({ mode: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('slow')])), tag: Type.String({ description: 'A tag' }) }),
  body: Type.Object({ items: Type.Array(Type.Object({ name: orNull(Type.String({ maxLength: 5 })) }, { additionalProperties: false })) }, { additionalProperties: false }),
  handler: () => ({}),
});

/** A query string of another form than one object: described as one parameter whose properties are the query's. */
const either = route({
  method: 'GET',
  path: '/probes',
  summary: 'A probe with either of two query parameters',
  capability: { acl: 'probesAcl', action: 'READ' },
  query: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]),
  handler: () => ({}),
});

let h: Harness;
let doc: Json;

beforeAll(async () => {
  h = await startHarness({}, {}, { extraRoutes: [probe, either] });
  const res = await h.strata.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  doc = res.json();
});
afterAll(() => h.close());

/** Every operation of the document, as `METHOD /path` with `{name}` parameters. */
function documented(): Map<string, Json> {
  const ops = new Map<string, Json>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) for (const [method, op] of Object.entries(item)) ops.set(`${method.toUpperCase()} ${path}`, op);
  return ops;
}

/** Every operation Fastify routes, read from its route tree (HEAD is answered for every GET). */
function routed(): Set<string> {
  const out = new Set<string>();
  const stack: string[] = [];
  for (const line of h.strata.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');
    for (const method of m[3]?.split(', ') ?? []) if (method !== 'HEAD') out.add(`${method} ${path}`);
  }
  return out;
}

function resolve(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce((at: Json, key: string) => at[key], doc);
}

describe('GET /openapi.json', () => {
  it('needs no token and is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('lists every operation the server routes, and nothing else', () => {
    const routes = routed();
    expect(routes.size).toBeGreaterThan(90);
    expect([...documented().keys()].sort()).toEqual([...routes].sort());
    for (const outside of ['GET /', 'GET /openapi.json', 'POST /oauth2/token', 'GET /.well-known/openid-configuration', 'GET /health/ready', 'GET /api/v1/token/inspect']) {
      expect(routes.has(outside), outside).toBe(true);
    }
  });

  it('leaves out a route that asks to be hidden: the CORS preflight', async () => {
    const cors = await startHarness({}, { STRATA_CORS_ORIGINS: 'https://app.example.com' });
    try {
      const res = await cors.strata.app.inject({ method: 'GET', url: '/openapi.json' });
      expect(cors.strata.app.printRoutes({ commonPrefix: false })).toContain('OPTIONS');
      const methods = Object.values(res.json().paths as Record<string, Json>).flatMap((item) => Object.keys(item));
      expect(methods).not.toContain('options');
      expect(methods.length).toBe(documented().size - 2);
    } finally {
      await cors.close();
    }
  });

  it('describes each project operation from its declaration', () => {
    const ops = documented();
    for (const def of h.strata.routes) {
      const path = `/api/v1/projects/{project}${def.path.replace(/:(\w+)/g, '{$1}')}`.replace(/(.)\/$/, '$1');
      const op = ops.get(`${def.method} ${path}`);
      expect(op, `${def.method} ${path}`).toBeDefined();
      expect(op!['x-capability']).toEqual(def.capability ? [def.capability, ...(def.alsoNeeds ?? [])].map((c) => `${c.acl}:${c.action}`) : undefined);
      expect(op!['x-channel']).toBe(def.channel ?? 'stable');
      expect(op!.requestBody !== undefined, `${def.method} ${path}`).toBe(def.body !== undefined);
      expect(Object.keys(op!.responses)).toEqual([String(def.status ?? 200), '4XX', '5XX']);
      expect(op!.security).toBeUndefined();
    }
    const op = ops.get('PUT /api/v1/projects/{project}/probes/{probeId}')!;
    expect(op.summary).toBe('A probe of the document');
    expect(op.description).toBe('Needs the capability probesAcl:WRITE or probesAcl:ADMIN.');
    expect(op['x-channel']).toBe('beta');
    expect(op.parameters).toEqual([
      { $ref: '#/components/parameters/project' },
      { name: 'probeId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
      { name: 'mode', in: 'query', required: false, schema: { anyOf: [{ type: 'string', const: 'fast' }, { type: 'string', const: 'slow' }] } },
      { name: 'tag', in: 'query', required: true, description: 'A tag', schema: { type: 'string' } },
    ]);
    expect(ops.get('GET /api/v1/projects/{project}/probes')!.parameters[1]).toEqual({
      name: 'query',
      in: 'query',
      style: 'form',
      explode: true,
      schema: { anyOf: [expect.objectContaining({ required: ['a'] }), expect.objectContaining({ required: ['b'] })] },
    });
    // `nullable`, the validator's spelling, is written as OpenAPI 3.1 writes it.
    expect(op.requestBody.content['application/json'].schema.properties.items.items.properties.name).toEqual({ type: ['string', 'null'], maxLength: 5 });
  });

  it('declares every path parameter, and the bearer token and error shape the API uses', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.components.parameters.project).toMatchObject({ name: 'project', in: 'path', required: true, example: 'dev' });
    const error = resolve(doc.components.responses.Error).content['application/json'].schema;
    expect(resolve(error).properties.error.required).toEqual(['code', 'message']);
    for (const [key, op] of documented()) {
      const declared = (op.parameters as Json[]).map(resolve).filter((p) => p.in === 'path').map((p) => p.name);
      expect(declared, key).toEqual([...key.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
      if (key.split(' ')[1].startsWith('/api/')) expect(op.responses['4XX'], key).toEqual({ $ref: '#/components/responses/Error' });
    }
  });

  it("names the reference's operations by its ids and tags, and every other one by what it does", () => {
    const ops = documented();
    expect(ops.get('POST /api/v1/projects/{project}/events/list')).toMatchObject({ operationId: 'advancedListEvents', tags: ['Events'] });
    expect(ops.get('GET /api/v1/token/inspect')).toMatchObject({ operationId: 'inspectToken', tags: ['Token'], security: [{ bearer: [] }] });
    expect(ops.get('GET /api/v1/projects/{project}')).toMatchObject({ operationId: 'getProject', tags: ['Strata'] });
    expect(ops.get('POST /oauth2/token')).toMatchObject({ tags: ['Strata'], security: [] });
    const ids = [...ops.values()].map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [key, op] of ops) if (op.tags[0] === 'Strata') expect(op.summary, key).toMatch(/\w/);
    const tags = new Set((doc.tags as Json[]).map((t) => t.name));
    for (const [key, op] of ops) expect(tags.has(op.tags[0]), key).toBe(true);
  });

  it('carries the schemas that validate requests: valid JSON Schema 2020-12 that takes and refuses what the server does', async () => {
    const ajv = new Ajv2020({ strict: true, allErrors: false });
    // The document's references, made local to each schema compiled.
    const local = (node: unknown): unknown =>
      JSON.parse(JSON.stringify(node).replace(/"#\/components\/schemas\//g, '"#/$defs/'));
    const defs = local(doc.components.schemas) as Json;
    const compile = (schema: Json) => ajv.compile({ ...(local(schema) as Json), $defs: defs });
    for (const [key, op] of documented()) {
      for (const p of (op.parameters as Json[]).map(resolve)) expect(() => compile(p.schema), `${key} ${p.name}`).not.toThrow();
      const body = op.requestBody?.content['application/json'].schema;
      if (body) expect(() => compile(body), key).not.toThrow();
    }
    const create = compile(documented().get('POST /api/v1/projects/{project}/events')!.requestBody.content['application/json'].schema);
    for (const [body, status] of [
      [{ items: [{ externalId: 'openapi-1', startTime: 1 }] }, 201],
      [{ items: [{ externalId: 'openapi-2', nope: 1 }] }, 400],
      [{ items: [] }, 400],
      [{ items: [{ externalId: 'x'.repeat(256) }] }, 400],
    ] as const) {
      expect(create(body), JSON.stringify(body)).toBe(status === 201);
      expect((await h.post('/events', body)).status).toBe(status);
    }
  });
});
