/**
 * Response bodies already rendered as JSON text (items rendered by SQL, see `itemJsonSql`). The route
 * wrapper sends them as they are: serializing them again is what rendering in SQL saves.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** `{"items":[...]}`, with `nextCursor` when there is one, from the JSON text of each item. */
export function itemsJson(items: readonly string[], nextCursor?: string): JsonText {
  const list = `{"items":[${items.join(',')}]`;
  return new JsonText(nextCursor ? `${list},"nextCursor":${JSON.stringify(nextCursor)}}` : `${list}}`);
}
