/**
 * Assertions that a listing from the API is what the in-memory evaluator says it should be; shared by the
 * property tests of every resource.
 */
import { expect } from 'vitest';
import { compareItems, orderIsKnown, resolveSorts, type Item, type Query, type ResourceModel } from './evaluator.js';

export const ids = (items: readonly Item[]) => items.map((e) => e.id);
export const sortedIds = (items: readonly Item[]) => ids(items).sort((a, b) => a - b);

/**
 * `got` holds exactly `expected`'s items, each once, in `expected`'s order where the evaluator knows it. With
 * search relevance in play it knows only the matched-leaf counts, so then only pairs those decide are checked.
 */
export function expectListing(model: ResourceModel, q: Pick<Query, 'advancedFilter' | 'sort'>, got: readonly Item[], expected: readonly Item[], label = 'result'): void {
  expect(new Set(ids(got)).size, `${label}: no duplicates across pages`).toBe(got.length);
  expect(sortedIds(got), `${label} set`).toEqual(sortedIds(expected));
  const sorts = resolveSorts(model, q.sort, q.advancedFilter);
  if (orderIsKnown(sorts, q.advancedFilter)) {
    expect(ids(got), `${label} order`).toEqual(ids(expected));
    return;
  }
  for (let i = 0; i < got.length; i++) {
    for (let j = i + 1; j < got.length; j++) {
      const c = compareItems(model, sorts, q.advancedFilter, got[i], got[j]);
      if (c !== undefined && c > 0) throw new Error(`${label}: ${got[i].id} is listed before ${got[j].id}`);
    }
  }
}

/** Each partition m/n lists the evaluator's part m, and together the parts are exactly `whole`. */
export async function expectPartitions(
  model: ResourceModel,
  q: Pick<Query, 'advancedFilter' | 'sort'>,
  n: number,
  list: (partition: string) => Promise<Item[]>,
  expectedPart: (partition: { index: number; count: number }) => Item[],
  whole: readonly Item[],
): Promise<void> {
  const seen: number[] = [];
  for (let m = 1; m <= n; m++) {
    const part = await list(`${m}/${n}`);
    expectListing(model, q, part, expectedPart({ index: m, count: n }), `partition ${m}/${n}`);
    seen.push(...ids(part));
  }
  expect(seen.sort((a, b) => a - b), 'partitions are disjoint and complete').toEqual(sortedIds(whole));
}
