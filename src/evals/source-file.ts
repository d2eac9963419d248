/**
 * Reading one YAML or JSON file, keeping the parsed tree so that any place in the data can be traced back
 * to a line and column. JSON files are held to JSON's own syntax, then read by the YAML parser (JSON is a
 * subset of YAML 1.2) for the positions.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Pair } from 'yaml';
import type { PathSegment, Position } from './diagnostics.js';
import { findJsonSyntaxError } from './json-syntax.js';
import { findExcessNesting, NESTING_MESSAGE } from './nesting.js';

export interface ParsedSource {
  data: unknown;
  /** Position of the value at `path`, or of the key `key` inside the map at `path`; falls back to the nearest enclosing node. */
  locate(path: readonly PathSegment[], key?: string): Position | undefined;
}

export interface SyntaxProblem {
  position?: Position;
  message: string;
}

export type ParseOutcome = { ok: true; source: ParsedSource } | { ok: false; problems: SyntaxProblem[] };

export type ReadOutcome = { ok: true; text: string } | { ok: false; reason: string; tooLarge?: true };

/** The largest suite, agent or fragment file read. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;

const READ_FAILURES: Record<string, string> = {
  ENOENT: 'file not found',
  EISDIR: 'is a directory, not a regular file',
  EACCES: 'permission denied',
  ELOOP: 'a symbolic link that leads to itself',
};

/** Non-blocking, so opening a named pipe nobody writes to returns at once (where the flag exists). */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
const CHUNK_BYTES = 64 * 1024;

/**
 * Reads a regular file of at most `maxBytes`. The type is checked on the opened descriptor, so what is
 * read is what was checked: a named pipe, a device or a directory is refused rather than waited on or
 * read without end.
 */
export function readText(absolutePath: string, maxBytes = MAX_FILE_BYTES): ReadOutcome {
  let fd: number;
  try {
    fd = openSync(absolutePath, OPEN_FLAGS);
  } catch (err) {
    return { ok: false, reason: readFailure(err) };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, reason: `is ${fileType(stat)}, not a regular file` };
    // Read to the end rather than trust the size: a file that grows meanwhile is still cut at the limit.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      const read = readSync(fd, chunk, 0, CHUNK_BYTES, null);
      if (read === 0) break;
      total += read;
      if (total > maxBytes) return { ok: false, reason: `is larger than ${maxBytes} bytes, the limit`, tooLarge: true };
      chunks.push(chunk.subarray(0, read));
    }
    return { ok: true, text: Buffer.concat(chunks, total).toString('utf8') };
  } catch (err) {
    return { ok: false, reason: readFailure(err) };
  } finally {
    closeSync(fd);
  }
}

function readFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return READ_FAILURES[code] ?? (err as Error).message;
}

function fileType(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a named pipe (FIFO)';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  return 'a special file';
}

/** The parser's wording for these reads like an API hint; say what is wrong with the file instead. */
const SYNTAX_MESSAGES: Record<string, string> = {
  MULTIPLE_DOCS: 'a file holds one document, but a second one starts here',
  DUPLICATE_KEY: 'the same key appears twice in this mapping',
};

export function parseSource(text: string, fileName: string): ParseOutcome {
  const format = fileName.endsWith('.json') ? 'JSON' : 'YAML';
  if (format === 'JSON') {
    const error = findJsonSyntaxError(text);
    if (error) return { ok: false, problems: [{ position: positionIn(text, error.offset), message: `malformed JSON: ${error.message}` }] };
  }
  // Before the parser, whose composer recurses once per level.
  const deep = findExcessNesting(text);
  if (deep !== undefined) return { ok: false, problems: [{ position: positionIn(text, deep), message: `malformed ${format}: ${NESTING_MESSAGE}` }] };
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const at = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => ({
        position: at(error.pos[0]),
        message: `malformed ${format}: ${SYNTAX_MESSAGES[error.code] ?? error.message}`,
      })),
    };
  }
  let data: unknown;
  try {
    data = document.toJS();
  } catch (err) {
    return { ok: false, problems: [{ message: `malformed ${format}: ${(err as Error).message}` }] };
  }
  return { ok: true, source: { data, locate: (path, key) => locateNode(document, path, key, at) } };
}

function positionIn(text: string, offset: number): Position {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

function locateNode(
  document: Document,
  path: readonly PathSegment[],
  key: string | undefined,
  at: (offset: number) => Position,
): Position | undefined {
  let node: unknown = document.contents;
  let found: unknown = node;
  const deref = (value: unknown) => (isAlias(value) ? value.resolve(document) : value);
  for (const segment of path) {
    node = deref(node);
    if (isMap(node)) node = findPair(node.items, String(segment))?.value;
    else if (isSeq(node) && typeof segment === 'number') node = node.items[segment];
    else break;
    if (node === undefined || node === null) break;
    found = node;
  }
  const container = deref(found);
  if (key !== undefined && isMap(container)) found = findPair(container.items, key)?.key ?? found;
  const range = (found as { range?: [number, number, number] } | null)?.range;
  return range ? at(range[0]) : undefined;
}

function findPair(pairs: Pair[], key: string): Pair | undefined {
  return pairs.find((pair) => isScalar(pair.key) && String(pair.key.value) === key);
}
