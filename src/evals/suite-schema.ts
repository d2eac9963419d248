/**
 * The shipped JSON Schema (schemas/eval-suite.schema.json), compiled once with Ajv. Everything the schema
 * can say about a single file is checked here; rules that span files live in suite-loader.ts.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type AnySchemaObject, type ValidateFunction } from 'ajv';
import type { DocumentProblem } from './diagnostics.js';
import { describeSchemaErrors } from './schema-messages.js';

/** The same relative path from src/evals and from the compiled dist/evals. */
export const SUITE_SCHEMA_URL = new URL('../../schemas/eval-suite.schema.json', import.meta.url);

interface CompiledSchemas {
  root: AnySchemaObject;
  suite: ValidateFunction;
  agentFile: ValidateFunction;
}

let compiled: CompiledSchemas | undefined;

function schemas(): CompiledSchemas {
  if (compiled) return compiled;
  const root = JSON.parse(readFileSync(SUITE_SCHEMA_URL, 'utf8')) as AnySchemaObject;
  // verbose keeps the failing data and schema on each error, which the messages quote;
  // discriminator makes Ajv validate only the scorer shape named by `type`, so one wrong field gives one error.
  const ajv = new Ajv({ allErrors: true, verbose: true, discriminator: true });
  ajv.addSchema(root);
  const id = String(root.$id);
  const lookup = (ref: string) => {
    const validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`${SUITE_SCHEMA_URL.pathname}: no schema at ${ref}`);
    return validate;
  };
  compiled = { root, suite: lookup(id), agentFile: lookup(`${id}#/definitions/agentFile`) };
  return compiled;
}

function check(validate: ValidateFunction, data: unknown): DocumentProblem[] {
  if (validate(data)) return [];
  return describeSchemaErrors(validate.errors ?? [], data, schemas().root);
}

export function checkSuiteDocument(data: unknown): DocumentProblem[] {
  return check(schemas().suite, data);
}

export function checkAgentFile(data: unknown): DocumentProblem[] {
  return check(schemas().agentFile, data);
}
