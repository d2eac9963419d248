/**
 * `targetUnit` / `targetUnitSystem`. Strata has no unit catalog yet, so values are never converted: asking
 * for the unit a series already has is accepted (nothing to convert), anything else is refused by name.
 */
import { badRequest } from '../../http/errors.js';
import { seriesLabel, type SeriesInfo } from './series-lookup.js';

export function checkTargetUnit(q: { targetUnit?: string; targetUnitSystem?: string }, s: SeriesInfo, where: string): void {
  if (q.targetUnit !== undefined && q.targetUnitSystem !== undefined) throw badRequest(`${where}: give targetUnit or targetUnitSystem, not both`);
  if (q.targetUnit !== undefined && q.targetUnit !== s.unitExternalId) {
    throw badRequest(
      `${where}.targetUnit: ${seriesLabel(s)} ${s.unitExternalId === null ? 'has no unitExternalId' : `is in ${JSON.stringify(s.unitExternalId)}`}; this server does not convert units`,
    );
  }
  if (q.targetUnitSystem !== undefined) throw badRequest(`${where}.targetUnitSystem: this server does not convert units to a unit system`);
}
