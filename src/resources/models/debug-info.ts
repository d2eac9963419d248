/**
 * The `debug` of list, query and sync: the notices, and when asked the statements the request ran on the
 * database (`includeTranslatedQuery`) and the database's plan of each (`includePlan`), grouped by the result
 * set expression they read for. Asking for either runs the request's reads also when `emitResults` is false,
 * so that there is something to show; the results are then left out all the same, and sync cursors stay
 * where they were.
 */
import type { Services } from '../../http/services.js';
import { StatementLog, type Reader } from '../../storage/read-pool.js';
import type { SqlValue } from '../../storage/sql.js';
import type { DebugParameters } from './instance-schema.js';

export class DebugReads {
  /** Where the request reads: through the log when statements are asked for. */
  readonly reads: Reader;
  /** Whether the answer holds the results. */
  readonly emit: boolean;
  /** Whether the request's reads run: for its results, or for the statements that read them. */
  readonly read: boolean;
  private readonly log: StatementLog | undefined;

  constructor(
    private readonly services: Services,
    private readonly debug: DebugParameters | undefined,
  ) {
    this.log = debug?.includeTranslatedQuery || debug?.includePlan ? new StatementLog(services.reads) : undefined;
    this.reads = this.log ?? services.reads;
    this.emit = debug?.emitResults ?? true;
    this.read = this.emit || this.log !== undefined;
  }

  /** The reads that follow are for this result set expression. */
  readingFor(name: string): void {
    if (this.log) this.log.label = name;
  }

  /** The answer's `debug` member, present when the request has a `debug` object. */
  async answer(notices: ReadonlyArray<Record<string, unknown>>): Promise<{ debug?: Record<string, unknown> }> {
    if (!this.debug) return {};
    const debug: Record<string, unknown> = { notices };
    const statements = this.log?.statements ?? [];
    if (this.debug.includeTranslatedQuery) {
      debug.translatedQuery = {
        query: { statements: statements.map((s) => s.query.text) },
        parameters: { statements: statements.map((s) => s.query.params.map(jsonParameter)) },
      };
    }
    if (this.debug.includePlan) {
      const dialect = this.services.db.dialect;
      const plans: unknown[] = [];
      // One after another: the request's reads did the same, and a plan costs a fraction of its read.
      for (const s of statements) plans.push(dialect.planOf(await this.services.reads.all(dialect.explain(s.query))));
      const byIdentifier: Record<string, { statements: unknown[] }> = {};
      statements.forEach((s, i) => {
        if (s.label !== undefined) (byIdentifier[s.label] ??= { statements: [] }).statements.push(plans[i]);
      });
      debug.plan = { fullPlan: { statements: plans }, profiled: false, byIdentifier };
    }
    return { debug };
  }
}

/** A statement parameter as JSON: integers past 2^53 as text, bytes as hexadecimal text. */
function jsonParameter(value: SqlValue): string | number | null {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  return value;
}
