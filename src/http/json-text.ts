/**
 * Response bodies already rendered as JSON (items rendered by SQL, see `itemJsonSql`). The route wrapper
 * sends them as they are: serializing them again is what rendering in SQL saves. A list page arrives as
 * UTF-8 bytes joined by SQLite, and is sent as bytes.
 *
 * Every JSON response ends with a newline, so that a shell prompt after `curl` starts on a line of its own;
 * JSON parsers take it as the whitespace it is.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pause } from '../storage/event-loop.js';

const END = '\n';
const END_BYTES = Buffer.from(END);

/** A value as the text of a JSON response, each whole-valued `FloatValue` written as a float. */
export function jsonResponseText(value: unknown): string {
  return stringify(value) + END;
}

/** `JSON.stringify`, with each whole-valued `FloatValue` written as a float. */
function stringify(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes(FLOAT_BOUNDARY) ? text.replace(MARKED_FLOAT, '$1.0') : text;
}

/**
 * From this size a body in pieces is streamed rather than copied into one buffer. A large page's bytes are
 * memory outside the JavaScript heap, and every such allocation counts towards the next full collection:
 * copying a 400 KB page once more to join it with its brackets doubled those collections during an export.
 * Below it, one small copy costs less than a stream.
 */
const STREAM_FROM_BYTES = 64 * 1024;

export class JsonText {
  constructor(readonly body: string | Buffer | readonly Buffer[]) {}

  /** What the route sends, with its length in bytes when it is a stream (Fastify sets it for the others). */
  payload(): { body: string | Buffer | Readable; length?: number } {
    const body = this.body;
    if (typeof body === 'string') return { body: body + END };
    const pieces = [...(Buffer.isBuffer(body) ? [body] : body), END_BYTES];
    let length = 0;
    for (const piece of pieces) length += piece.length;
    if (length < STREAM_FROM_BYTES) return { body: Buffer.concat(pieces, length) };
    return { body: Readable.from(pieces, { objectMode: false }), length };
  }
}

/** A response body in a format other than JSON, already encoded (data points as protocol buffers). */
export class EncodedBody {
  constructor(
    readonly type: string,
    readonly body: Buffer,
  ) {}
}

/** `{"items":[...]}`, with `nextCursor` when there is one, from the JSON text of each item. */
export function itemsJson(items: readonly string[], nextCursor?: string): JsonText {
  return new JsonText(`{"items":[${items.join(',')}${closing(nextCursor)}`);
}

const OPEN = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');

/** The same from pieces of UTF-8, each a comma-separated run of items (see PageQuery.join). */
export function joinedItemsJson(pieces: readonly Buffer[], nextCursor?: string): JsonText {
  const parts: Buffer[] = [OPEN];
  pieces.forEach((piece, i) => parts.push(...(i > 0 ? [COMMA, piece] : [piece])));
  parts.push(Buffer.from(closing(nextCursor)));
  return new JsonText(parts);
}

function closing(nextCursor: string | undefined): string {
  return nextCursor ? `],"nextCursor":${JSON.stringify(nextCursor)}}` : ']}';
}

/**
 * A number of a floating-point type, written as a JSON float even when it holds a whole number (`165.0`, not
 * `165`): clients that type a number by its JSON form (Python reads `165` as an int) then read a float, as
 * they do from the reference. `JSON.stringify` writes whole numbers without a fraction, so `toJSON` gives a
 * whole number as a string that starts with a random boundary (as a multipart body's parts are delimited),
 * and `jsonResponseText` turns each such string back into a number with `.0`. Anything written through
 * `JSON.stringify` alone would show the boundary: responses are written by `jsonResponseText`.
 */
export class FloatValue {
  constructor(readonly value: number) {}

  toJSON(): number | string {
    const text = String(this.value);
    return WHOLE.test(text) ? `${FLOAT_BOUNDARY}${text}` : this.value;
  }
}

/** A number's JSON text where `JSON.stringify` writes digits alone; larger and smaller ones it writes with an exponent. */
const WHOLE = /^-?\d+$/;

/** The JSON text of a finite number of a floating-point type, as a FloatValue is written (`165.0`), for answers built as text. */
export function floatJson(value: number): string {
  const text = String(value);
  return WHOLE.test(text) ? `${text}.0` : text;
}

const FLOAT_BOUNDARY = randomBytes(16).toString('hex');
const MARKED_FLOAT = new RegExp(`"${FLOAT_BOUNDARY}(-?\\d+)"`, 'g');

/** A list in an answer that `jsonInSlices` renders a slice at a time, each item by `render`. */
export class LazyList<T> {
  constructor(
    readonly items: readonly T[],
    readonly render: (item: T) => unknown,
  ) {}
}

/** Items of a LazyList rendered between two turns of the event loop. */
const SLICE_ITEMS = 500;

/**
 * The JSON text of an answer whose lists may be long (tens of thousands of instances): its LazyLists are
 * rendered `SLICE_ITEMS` at a time, and the event loop gets its turn between slices when they run long
 * (storage/event-loop.ts), where one `JSON.stringify` of the whole would hold the thread for as long as it
 * takes. Plain objects are walked for LazyLists; anything else is rendered as `jsonResponseText` renders it.
 */
export async function jsonInSlices(value: unknown): Promise<JsonText> {
  const pieces: Buffer[] = [];
  let text = '';
  // Pieces are joined until they make a buffer worth streaming on its own.
  const push = (s: string) => {
    text += s;
    if (text.length >= STREAM_FROM_BYTES) {
      pieces.push(Buffer.from(text));
      text = '';
    }
  };
  const write = async (v: unknown): Promise<void> => {
    if (v instanceof LazyList) {
      push('[');
      for (let at = 0; at < v.items.length; at += SLICE_ITEMS) {
        const slice = stringify(v.items.slice(at, at + SLICE_ITEMS).map(v.render));
        push(`${at > 0 ? ',' : ''}${slice.slice(1, -1)}`);
        await pause();
      }
      push(']');
    } else if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype) {
      push('{');
      let first = true;
      for (const [key, member] of Object.entries(v)) {
        if (member === undefined) continue;
        push(`${first ? '' : ','}${JSON.stringify(key)}:`);
        first = false;
        await write(member);
      }
      push('}');
    } else {
      push(stringify(v));
    }
  };
  await write(value);
  if (text) pieces.push(Buffer.from(text));
  return new JsonText(pieces);
}
