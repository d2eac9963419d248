/**
 * `GET /openapi.json`: an OpenAPI 3.1 document of every operation the server serves, generated when it starts
 * from what declares them, so that it cannot drift from what the server does: the project's operations from
 * their ApiRoute (method, path, capability, the schemas that validate their requests, status, channel), and
 * every other route from Fastify's route table (its schema's `summary`, `description`, `security`, `body` and
 * `querystring`, the keys other Fastify tools read too; `hide` leaves a route out). Operations the reference
 * has keep its operation id and tag; the others are tagged `Strata`.
 *
 * Paths are written whole (`/api/v1/projects/{project}/events`), with `project` a parameter: a project's own
 * address (`GET /api/v1/projects/{project}`) and the server's root (`GET /`) would otherwise share the path `/`.
 */
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { ErrorBody } from './errors.js';
import { jsonResponseText } from './json-text.js';
import { operationKey, PROJECT_TEMPLATE, readReferenceCatalog, wholePath, type ReferenceOperation } from './reference-catalog.js';
import { API_PREFIX, templatePath, type ApiRoute } from './route.js';
import { SCALARS_AS_TEXT } from './validation.js';
import { LATEST_STABLE } from './versioning.js';

type Json = Record<string, unknown>;

declare module 'fastify' {
  /** What a route outside the project's operations says of itself in the document (the keys other Fastify tools read too). */
  interface FastifySchema {
    summary?: string;
    description?: string;
    /** OpenAPI security requirements; none (no token) unless given. */
    security?: Array<Record<string, string[]>>;
    /** Left out of the document. */
    hide?: boolean;
  }
}

type RouteSchema = FastifySchema & { body?: Json; querystring?: Json; params?: Json };

interface ServerRoute {
  method: string;
  url: string;
  schema: RouteSchema;
}

export interface OpenApiOptions {
  /** The server's public address. */
  origin: string;
  /** A project to show as the example of `{project}`. */
  project: string;
}

/** The tag of operations the reference does not describe. */
const OWN_TAG = 'Strata';
const BEARER = 'bearer';

/**
 * Serves the document at GET /openapi.json, built when the server is ready. Call before any other route is
 * registered: the document lists the routes registered after it.
 */
export function registerOpenApi(app: FastifyInstance, routes: readonly ApiRoute[], options: OpenApiOptions): void {
  const declared = new Set(routes.map((r) => operationKey(r.method, `${API_PREFIX}${r.path}`)));
  const others: ServerRoute[] = [];
  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as RouteSchema;
    for (const method of [route.method].flat()) {
      // HEAD is answered for every GET: the GET describes it.
      if (method === 'HEAD' || schema.hide || declared.has(operationKey(method, route.url))) continue;
      others.push({ method, url: route.url, schema });
    }
  });
  let document = '';
  app.addHook('onReady', async () => {
    document = jsonResponseText(openApiDocument(routes, others, options));
  });
  app.get('/openapi.json', { schema: { summary: 'Every operation the server serves, as an OpenAPI 3.1 document' } }, async (_req, reply) =>
    reply.type('application/json; charset=utf-8').send(document),
  );
}

/** One operation as the document describes it, whichever way it was declared. */
interface Described {
  method: string;
  /** Whole, as a template: `/api/v1/projects/{project}/events/{id}`. */
  path: string;
  summary?: string;
  description?: string;
  /** Absent: the document's default (a bearer token). */
  security?: Array<Record<string, string[]>>;
  pathParameters: Json[];
  query: Json[];
  body?: Json;
  protobufBody: boolean;
  status: number;
  /** Whether it answers JSON, and errors in the API's error shape. */
  api: boolean;
  extensions: Json;
}

function fromApiRoute(def: ApiRoute, schemas: SchemaConverter): Described {
  return {
    method: def.method,
    path: wholeTemplate(`${API_PREFIX}${def.path}`),
    summary: def.summary,
    description: capabilityText(def),
    pathParameters: def.params ? propertyParameters(def.params as Json, 'path', schemas) : [],
    query: def.query ? propertyParameters(def.query as Json, 'query', schemas) : [],
    body: def.body ? schemas.convert(def.body as Json) : undefined,
    protobufBody: def.protobufBody !== undefined,
    status: def.status ?? 200,
    api: true,
    extensions: {
      ...(def.capability ? { 'x-capability': [def.capability, ...(def.alsoNeeds ?? [])].map((c) => `${c.acl}:${c.action}`) } : {}),
      'x-channel': def.channel ?? 'stable',
    },
  };
}

function fromServerRoute({ method, url, schema }: ServerRoute, schemas: SchemaConverter): Described {
  return {
    method,
    path: wholeTemplate(url),
    summary: schema.summary,
    description: schema.description,
    security: schema.security ?? [],
    pathParameters: schema.params ? propertyParameters(schema.params, 'path', schemas) : [],
    query: schema.querystring ? propertyParameters(schema.querystring, 'query', schemas) : [],
    body: schema.body ? schemas.convert(schema.body) : undefined,
    protobufBody: false,
    status: 200,
    // The API's paths answer JSON and errors in its shape; the server's own (OAuth, health, metrics) their own.
    api: url.startsWith('/api/'),
    extensions: {},
  };
}

function wholeTemplate(url: string): string {
  return templatePath(url).replace(/(.)\/$/, '$1');
}

function openApiDocument(routes: readonly ApiRoute[], others: readonly ServerRoute[], options: OpenApiOptions): Json {
  const schemas = new SchemaConverter();
  const catalog = readReferenceCatalog();
  const reference = new Map(catalog.map((op) => [operationKey(op.method, wholePath(op.path)), op]));
  const ids = new Set<string>();
  const paths: Record<string, Record<string, Json>> = {};
  for (const d of [...routes.map((r) => fromApiRoute(r, schemas)), ...others.map((r) => fromServerRoute(r, schemas))]) {
    const known = reference.get(operationKey(d.method, d.path));
    (paths[d.path] ??= {})[d.method.toLowerCase()] = {
      operationId: uniqueId(ids, known?.operationId || derivedId(d.method, d.path)),
      tags: [known?.tag ?? OWN_TAG],
      ...(d.summary ? { summary: d.summary } : {}),
      ...(d.description ? { description: d.description } : {}),
      ...(d.security ? { security: d.security } : {}),
      ...d.extensions,
      parameters: [...pathParameters(d.path, d.pathParameters), ...d.query],
      ...(d.body ? { requestBody: requestBody(d.body, d.protobufBody) } : {}),
      responses: {
        [String(d.status)]: { description: STATUS_CODES[d.status] ?? 'Success', ...(d.api ? { content: { 'application/json': {} } } : {}) },
        ...(d.api ? { '4XX': ERROR_RESPONSE, '5XX': ERROR_RESPONSE } : {}),
      },
    };
  }

  const used = new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags as string[])));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Strata',
      version: LATEST_STABLE.name,
      description:
        `Every operation this server serves. A project's operations are under ${PROJECT_TEMPLATE} and need a bearer token ` +
        `(from ${options.origin}/oauth2/token with the built-in identity provider) holding the capability in each operation's x-capability; ` +
        'an operation of a beta or alpha channel (x-channel) needs that channel on the version header. An operation of the reference ' +
        'that this server does not serve answers 501.',
    },
    servers: [{ url: options.origin }],
    security: [{ [BEARER]: [] }],
    tags: tagList(catalog, used),
    'x-tagGroups': tagGroups(catalog, used),
    paths,
    components: {
      securitySchemes: {
        [BEARER]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "An OpenID Connect access token from the project's identity provider" },
      },
      parameters: {
        project: { name: 'project', in: 'path', required: true, description: "The project's name", schema: { type: 'string' }, example: options.project },
      },
      responses: {
        Error: { description: 'The request was refused or failed', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      schemas: { Error: schemas.convert(ErrorBody as unknown as Json), ...schemas.named },
    },
  };
}

const ERROR_RESPONSE = { $ref: '#/components/responses/Error' };

function capabilityText(def: ApiRoute): string {
  const cap = def.capability;
  if (!cap) return 'Needs a token that may address the project; no capability.';
  const alternatives = (cap.impliedBy ?? []).map((action) => ` or ${cap.acl}:${action}`).join('');
  const also = (def.alsoNeeds ?? []).map((c) => ` and ${c.acl}:${c.action}`).join('');
  return `Needs the capability ${cap.acl}:${cap.action}${alternatives}${also}.`;
}

function requestBody(schema: Json, protobuf: boolean): Json {
  return {
    required: true,
    content: {
      'application/json': { schema },
      ...(protobuf ? { 'application/protobuf': { schema: { type: 'string', contentMediaType: 'application/protobuf' } } } : {}),
    },
  };
}

/** One parameter per property of an object schema (path parameters, the query string). */
function propertyParameters(schema: Json, where: 'path' | 'query', schemas: SchemaConverter): Json[] {
  const properties = schema.properties as Record<string, Json> | undefined;
  // A query schema of another form (a union) is one parameter whose properties each name a query parameter.
  if (!properties) return where === 'path' ? [] : [{ name: where, in: where, style: 'form', explode: true, schema: schemas.convert(schema) }];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: schemas.convert(rest),
    };
  });
}

/** Every parameter of the path template: `project` the shared one, the others as declared, or text. */
function pathParameters(path: string, declared: readonly Json[]): Json[] {
  const byName = new Map(declared.map((p) => [p.name as string, p]));
  const project = path === PROJECT_TEMPLATE || path.startsWith(`${PROJECT_TEMPLATE}/`);
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) =>
    project && name === 'project'
      ? { $ref: '#/components/parameters/project' }
      : (byName.get(name) ?? { name, in: 'path', required: true, schema: { type: 'string' } }),
  );
}

/** `POST /api/v1/projects/{project}/events/{id}` -> `postProjectEventsById`. */
function derivedId(method: string, path: string): string {
  const words = path
    .replace(PROJECT_TEMPLATE, '/project')
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      return param ? ['by', param[1]] : segment.split(/[^A-Za-z0-9]+/).filter(Boolean);
    });
  return method.toLowerCase() + (words.length > 0 ? words.map((w) => w[0].toUpperCase() + w.slice(1)).join('') : 'Root');
}

function uniqueId(ids: Set<string>, id: string): string {
  let unique = id;
  for (let n = 2; ids.has(unique); n++) unique = `${id}${n}`;
  ids.add(unique);
  return unique;
}

function tagList(catalog: readonly ReferenceOperation[], used: ReadonlySet<string>): Json[] {
  const tags = [...new Set(catalog.map((op) => op.tag))].filter((tag) => used.has(tag)).map((name) => ({ name }));
  return [...tags, { name: OWN_TAG, description: 'Operations of Strata that the reference does not describe' }];
}

/** The catalog's areas, as tag groups (the `x-tagGroups` that documentation renderers read): each tag in the first area that has it. */
function tagGroups(catalog: readonly ReferenceOperation[], used: ReadonlySet<string>): Json[] {
  const areaOf = new Map<string, string>();
  for (const op of catalog) if (used.has(op.tag) && !areaOf.has(op.tag)) areaOf.set(op.tag, op.area);
  const groups = new Map<string, string[]>();
  for (const [tag, area] of areaOf) (groups.get(area) ?? groups.set(area, []).get(area)!).push(tag);
  return [...[...groups].map(([name, tags]) => ({ name, tags })), { name: OWN_TAG, tags: [OWN_TAG] }];
}

/**
 * Request schemas as OpenAPI 3.1 (JSON Schema 2020-12) writes them. The schemas that validate requests use
 * two things of the validator's own: `nullable` (OpenAPI 3.0's spelling, which Ajv reads) becomes a `null`
 * type, and the keyword that takes numbers as text is left out. A schema with an `$id` (a recursive one) goes
 * to the components, and references to it point there.
 */
class SchemaConverter {
  readonly named: Record<string, Json> = {};

  convert(schema: Json): Json {
    return this.walk(JSON.parse(JSON.stringify(schema)) as unknown) as Json;
  }

  private walk(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.walk(n));
    if (node === null || typeof node !== 'object') return node;
    const { $id, $ref, nullable, [SCALARS_AS_TEXT]: _text, ...rest } = node as Json;
    if (typeof $id === 'string') {
      const name = componentName($id);
      if (!(name in this.named)) {
        // Taken before its contents are walked, so that a schema holding itself by `$id` is walked once.
        this.named[name] = {};
        this.named[name] = this.walk(rest) as Json;
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    const out: Json = {};
    for (const [key, value] of Object.entries(rest)) {
      out[key] = SCHEMA_MAPS.has(key) ? this.walkMap(value as Json) : VALUES.has(key) ? value : this.walk(value);
    }
    if (typeof $ref === 'string') out.$ref = $ref.startsWith('#') ? $ref : `#/components/schemas/${componentName($ref)}`;
    return nullable === true ? orNull(out) : out;
  }

  private walkMap(map: Json): Json {
    return Object.fromEntries(Object.entries(map).map(([key, value]) => [key, this.walk(value)]));
  }
}

/** Keywords whose value maps names to schemas, and keywords whose value is data rather than a schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
const VALUES = new Set(['const', 'enum', 'default', 'examples', 'required']);

function componentName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}

function orNull(schema: Json): Json {
  if (typeof schema.type === 'string' && !('enum' in schema) && !('const' in schema)) return { ...schema, type: [schema.type, 'null'] };
  const { description, ...rest } = schema;
  return { ...(description ? { description } : {}), anyOf: [rest, { type: 'null' }] };
}
