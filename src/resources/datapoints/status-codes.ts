/**
 * Data point status codes: 32-bit codes in the OPC UA layout. The two top bits give the class (00 good,
 * 01 uncertain, 10 bad); the sub code (bits 16-27) names the condition; the low 16 bits carry flags.
 * A point names its status by `code`, by `symbol` ("BadSensorFailure", "Good, Low, Calculated") or by both,
 * which must then agree. Good (0) is the default and is never shown in responses.
 */
import { readFileSync } from 'node:fs';
import { badRequest } from '../../http/errors.js';

/** The table of conditions (catalog/opcua/status-codes.tsv), the same relative path from src and from dist. */
const TABLE_URL = new URL('../../../catalog/opcua/status-codes.tsv', import.meta.url);

function readTable(): Array<[string, number]> {
  const rows: Array<[string, number]> = [];
  for (const line of readFileSync(TABLE_URL, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [code, name] = line.split('\t');
    rows.push([name, Number(code)]);
  }
  return rows;
}

const NAMED = readTable();
const NAME_BY_BASE = new Map(NAMED.map(([name, code]) => [code, name]));
const BASE_BY_NAME = new Map(NAMED.map(([name, code]) => [name, code]));
/** Names by a folded spelling (lower case, no underscores), to point a misspelt symbol at the right one. */
const NAME_BY_FOLDED = new Map(NAMED.map(([name]) => [fold(name), name]));

function fold(word: string): string {
  return word.toLowerCase().replace(/_/g, '');
}

/** Flags of the low 16 bits, as written after the name in a symbol (in this order, highest bits first). */
const FLAGS: ReadonlyArray<readonly [string, number, number]> = [
  // [name, mask, value]
  ['StructureChanged', 0x8000, 0x8000],
  ['SemanticsChanged', 0x4000, 0x4000],
  ['Low', 0x0300, 0x0100],
  ['High', 0x0300, 0x0200],
  ['Constant', 0x0300, 0x0300],
  ['Overflow', 0x0080, 0x0080],
  ['MultiValue', 0x0010, 0x0010],
  ['ExtraData', 0x0008, 0x0008],
  ['Partial', 0x0004, 0x0004],
  ['Calculated', 0x0003, 0x0001],
  ['Interpolated', 0x0003, 0x0002],
];
const FLAG_BY_NAME = new Map(FLAGS.map((f) => [f[0], f]));
const FLAG_BY_FOLDED = new Map(FLAGS.map((f) => [fold(f[0]), f[0]]));
/** Flags other than the two "changed" bits describe the value and need info type "data value" (bit 10). */
const DATA_VALUE_INFO = 0x0400;
const VALUE_FLAG_BITS = 0x03ff;

const hex = (code: number) => `0x${code.toString(16).toUpperCase().padStart(8, '0')}`;

/** Why a code is not a valid status code, or undefined when it is. */
function codeProblem(code: number): string | undefined {
  if (!Number.isInteger(code) || code < 0 || code > 0xffffffff) return 'must be an unsigned 32-bit integer';
  if (code >>> 30 === 3) return `${hex(code)} has the reserved severity bits 11`;
  if (code & 0x30000000 || code & 0x3000) return `${hex(code)} sets reserved bits`;
  if (!NAME_BY_BASE.has((code & 0xffff0000) >>> 0)) return `${hex(code)} is not a known status code`;
  const infoType = (code >>> 10) & 3;
  if (infoType > 1) return `${hex(code)} has a reserved info type`;
  if (infoType === 0 && code & VALUE_FLAG_BITS) return `${hex(code)} sets value flags without the data-value info type (bit 10)`;
  if ((code & 3) === 3 || code & 0x60) return `${hex(code)} sets reserved value flags`;
  return undefined;
}

/** The symbol of a valid code: its name, then its flags. */
export function statusSymbol(code: number): string {
  const parts = [NAME_BY_BASE.get((code & 0xffff0000) >>> 0)!];
  for (const [name, mask, value] of FLAGS) if ((code & mask) === value) parts.push(name);
  return parts.join(', ');
}

/** The code a symbol names, or why it names none (empty when there is nothing more to say than "unknown"). */
function parseSymbol(symbol: string): number | string {
  const [head, ...rest] = symbol.split(',').map((s) => s.trim());
  let code = BASE_BY_NAME.get(head);
  if (code === undefined) {
    const near = NAME_BY_FOLDED.get(fold(head));
    return near ? `names are case-sensitive; did you mean "${near}"?` : '';
  }
  for (const part of rest) {
    const flag = FLAG_BY_NAME.get(part);
    if (!flag) {
      const near = FLAG_BY_FOLDED.get(fold(part));
      const shown = JSON.stringify(part.slice(0, 40));
      return near ? `${shown} is not a flag; did you mean "${near}"?` : `${shown} is not a flag (flags: ${FLAGS.map((f) => f[0]).join(', ')})`;
    }
    const [, mask, value] = flag;
    if ((code & mask) !== 0) return `the flag "${part}" conflicts with an earlier one`;
    code = (code | value | (mask & VALUE_FLAG_BITS ? DATA_VALUE_INFO : 0)) >>> 0;
  }
  return code;
}

/** The code of a status object from a request (`{code}`, `{symbol}` or both); throws a 400 naming `where`. */
export function parseStatus(status: unknown, where: string): number {
  if (status === null || typeof status !== 'object' || Array.isArray(status)) throw badRequest(`${where}: expected an object with "code" or "symbol"`);
  const { code, symbol, ...other } = status as { code?: unknown; symbol?: unknown };
  const extra = Object.keys(other)[0];
  if (extra !== undefined) throw badRequest(`${where}: unknown property "${extra}" (allowed: code, symbol)`);
  let fromCode: number | undefined;
  if (code !== undefined) {
    if (typeof code !== 'number') throw badRequest(`${where}.code: expected integer, got ${code === null ? 'null' : typeof code}`);
    const problem = codeProblem(code);
    if (problem) throw badRequest(`${where}.code: ${problem}`);
    fromCode = code;
  }
  let fromSymbol: number | undefined;
  if (symbol !== undefined) {
    if (typeof symbol !== 'string') throw badRequest(`${where}.symbol: expected string, got ${symbol === null ? 'null' : typeof symbol}`);
    const parsed = parseSymbol(symbol);
    if (typeof parsed === 'string') {
      throw badRequest(`${where}.symbol: ${JSON.stringify(symbol.slice(0, 100))} is not a known status symbol${parsed ? `: ${parsed}` : ''}`);
    }
    fromSymbol = parsed;
  }
  if (fromCode === undefined && fromSymbol === undefined) throw badRequest(`${where}: give "code", "symbol" or both`);
  if (fromCode !== undefined && fromSymbol !== undefined && fromCode !== fromSymbol) {
    throw badRequest(`${where}: code ${fromCode} and symbol ${JSON.stringify(symbol)} name different statuses (the symbol is code ${fromSymbol})`);
  }
  return (fromCode ?? fromSymbol)!;
}

/** The response form of a status; none for Good (0), which responses leave out. */
export function statusOutput(code: number): { code: number; symbol: string } | undefined {
  return code === 0 ? undefined : { code, symbol: statusSymbol(code) };
}
