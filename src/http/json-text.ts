/**
 * Response bodies already rendered as JSON (items rendered by SQL, see `itemJsonSql`). The route wrapper
 * sends them as they are: serializing them again is what rendering in SQL saves. A list page arrives as
 * UTF-8 bytes joined by the thread that read it, and is sent as bytes.
 */
export class JsonText {
  constructor(readonly body: string | Buffer) {}
}

/** `{"items":[...]}`, with `nextCursor` when there is one, from the JSON text of each item. */
export function itemsJson(items: readonly string[], nextCursor?: string): JsonText {
  return new JsonText(`{"items":[${items.join(',')}${closing(nextCursor)}`);
}

const OPEN = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');

/** The same from pieces of UTF-8, each a comma-separated run of items (see JoinColumn). */
export function joinedItemsJson(pieces: readonly Buffer[], nextCursor?: string): JsonText {
  const parts: Buffer[] = [OPEN];
  pieces.forEach((piece, i) => parts.push(...(i > 0 ? [COMMA, piece] : [piece])));
  parts.push(Buffer.from(closing(nextCursor)));
  return new JsonText(Buffer.concat(parts));
}

function closing(nextCursor: string | undefined): string {
  return nextCursor ? `],"nextCursor":${JSON.stringify(nextCursor)}}` : ']}';
}
