/**
 * `/models/instances/query`: the result set expressions of `with` evaluated (result-sets.ts), and of the
 * sets named in `select` their page of instances rendered with the properties asked for, a cursor per set
 * that has more, typing when asked, and debug notices. The answer is rendered a slice of instances at a time
 * (tens of thousands of instances take a while), letting other requests run between slices.
 */
import { jsonInSlices, LazyList } from '../../http/json-text.js';
import type { Services } from '../../http/services.js';
import { DebugReads } from './debug-info.js';
import { fail } from './identifiers.js';
import { ReadShape } from './instance-reads-store.js';
import { InstanceSql, requestScope } from './instance-sql.js';
import type { QueryInstancesBody } from './query-schema.js';
import { evaluateResultSets, planResultSets, resultSetNotices, selectedSources } from './result-sets.js';
import { visibleSchema } from './space-access.js';

export async function queryInstances(services: Services, projectId: number, body: QueryInstancesBody) {
  const schema = await visibleSchema(services, projectId);
  const plan = planResultSets(body, schema);
  const sources = new Map(Object.entries(body.select).map(([name, s]) => [name, selectedSources(s.sources, schema, ['select', name, 'sources'])]));
  for (const name of Object.keys(body.cursors ?? {})) {
    if (!plan.byName.has(name)) fail(['cursors', name], `there is no result set expression ${JSON.stringify(name)} in "with"`);
  }
  const debug = new DebugReads(services, body.debug);
  const items: Record<string, LazyList<Record<string, unknown>>> = {};
  const nextCursor: Record<string, string> = {};
  const typing: Record<string, unknown> = {};
  const evaluated = debug.read
    ? await evaluateResultSets(
        { reads: debug.reads, dialect: services.db.dialect, projectId, schema, access: services.access, cursors: services.cursors, debug },
        plan,
        { binding: { op: 'instances/query', with: body.with, select: body.select, parameters: body.parameters ?? {} }, cursors: body.cursors, sources, wanted: Object.keys(body.select) },
      )
    : undefined;
  const pages = debug.emit ? evaluated : undefined;
  for (const name of Object.keys(body.select)) {
    const page = pages?.get(name);
    items[name] = new LazyList(page?.rows ?? [], (r) => page!.shape.render(r));
    if (page?.nextCursor) nextCursor[name] = page.nextCursor;
  }
  if (body.includeTyping) {
    for (const [name, read] of sources) if (read.length > 0) typing[name] = new ReadShape(new InstanceSql(requestScope(services, projectId, schema)), read).typing();
  }
  return jsonInSlices({
    items,
    ...(body.includeTyping ? { typing } : {}),
    nextCursor,
    ...(await debug.answer(resultSetNotices(schema, plan))),
  });
}
