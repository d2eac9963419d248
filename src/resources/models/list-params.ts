/**
 * Query parameters of the GET lists that arrive in more than one form: `usedFor` as repeated parameters
 * (`usedFor=node&usedFor=edge`), as the JavaScript SDK writes arrays (`usedFor=[node,edge]`), or as JSON
 * (`usedFor=["node","edge"]`).
 */
import { badRequest } from '../../http/errors.js';

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
