/**
 * Response bodies already rendered as JSON (items rendered by SQL, see `itemJsonSql`). The route wrapper
 * sends them as they are: serializing them again is what rendering in SQL saves. A list page arrives as
 * UTF-8 bytes encoded by the read worker, and is sent as bytes.
 */
export class JsonText {
  constructor(readonly body: string | Buffer) {}
}

const OPEN = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');

/** `{"items":[...]}`, with `nextCursor` when there is one, from the JSON text (or its UTF-8 bytes) of each item. */
export function itemsJson(items: ReadonlyArray<string | Buffer>, nextCursor?: string): JsonText {
  const close = nextCursor ? `],"nextCursor":${JSON.stringify(nextCursor)}}` : ']}';
  if (!items.some((item) => typeof item !== 'string')) return new JsonText(`{"items":[${items.join(',')}${close}`);
  const parts: Buffer[] = [OPEN];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(typeof item === 'string' ? Buffer.from(item) : item);
  });
  parts.push(Buffer.from(close));
  return new JsonText(Buffer.concat(parts));
}
