/**
 * Query parameters of the GET lists: those they all take, and `usedFor`, which arrives as repeated parameters
 * (`usedFor=node&usedFor=edge`), as the JavaScript SDK writes arrays (`usedFor=[node,edge]`), or as JSON
 * (`usedFor=["node","edge"]`).
 */
import { Type } from '@sinclair/typebox';
import { Cursor } from '../../http/common-schemas.js';
import { badRequest } from '../../http/errors.js';
import { DM_LIMITS } from './limits.js';

/** The query parameters every GET list of spaces, containers, views and data models takes. */
export const LIST_QUERY_FIELDS = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: DM_LIMITS.listMax, default: DM_LIMITS.listDefault })),
  cursor: Type.Optional(Cursor),
  includeGlobal: Type.Optional(Type.Boolean()),
};

export const USED_FOR_VALUES = ['node', 'edge', 'all', 'record'] as const;
export type UsedForFilter = (typeof USED_FOR_VALUES)[number];

/** The kinds a list is restricted to; undefined when the parameter is absent. */
export function parseUsedFor(raw: readonly string[] | undefined): UsedForFilter[] | undefined {
  if (raw === undefined) return undefined;
  const values = raw.flatMap((v) => {
    const text = v.trim();
    const inner = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
    return inner.split(',').map((s) => s.trim().replace(/^"(.*)"$/, '$1')).filter((s) => s !== '');
  });
  const bad = values.find((v) => !(USED_FOR_VALUES as readonly string[]).includes(v.toLowerCase()));
  if (bad !== undefined) throw badRequest(`query parameter "usedFor": ${JSON.stringify(bad)} is not one of ${USED_FOR_VALUES.join(', ')}`);
  return [...new Set(values.map((v) => v.toLowerCase() as UsedForFilter))];
}
