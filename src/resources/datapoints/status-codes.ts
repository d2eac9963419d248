/**
 * Data point status codes: 32-bit codes in the OPC UA layout. The two top bits give the class (00 good,
 * 01 uncertain, 10 bad); the sub code (bits 16-27) names the condition; the low 16 bits carry flags.
 * A point names its status by `code`, by `symbol` ("BadSensorFailure", "Good, Low, Calculated") or by both,
 * which must then agree. Good (0) is the default and is never shown in responses.
 */
import { badRequest } from '../../http/errors.js';

/** The named conditions a data point can carry, by sub code with class (bits 16-31). */
const NAMED: ReadonlyArray<readonly [string, number]> = [
  ['Good', 0x00000000],
  ['GoodClamped', 0x00300000],
  ['GoodLocalOverride', 0x00960000],
  ['GoodEntryInserted', 0x00a20000],
  ['GoodEntryReplaced', 0x00a30000],
  ['GoodNoData', 0x00a50000],
  ['GoodMoreData', 0x00a60000],
  ['GoodEdited', 0x00dc0000],
  ['GoodOverload', 0x002f0000],
  ['GoodCascade', 0x04090000],
  ['GoodFaultStateActive', 0x04070000],
  ['Uncertain', 0x40000000],
  ['UncertainNoCommunicationLastUsableValue', 0x408f0000],
  ['UncertainLastUsableValue', 0x40900000],
  ['UncertainSubstituteValue', 0x40910000],
  ['UncertainInitialValue', 0x40920000],
  ['UncertainSensorNotAccurate', 0x40930000],
  ['UncertainEngineeringUnitsExceeded', 0x40940000],
  ['UncertainSubNormal', 0x40950000],
  ['UncertainDataSubNormal', 0x40a40000],
  ['UncertainDominantValueChanged', 0x40de0000],
  ['UncertainDependentValueChanged', 0x40e20000],
  ['UncertainTransducerInManual', 0x42080000],
  ['UncertainSimulatedValue', 0x42090000],
  ['UncertainSensorCalibration', 0x420a0000],
  ['UncertainConfigurationError', 0x420f0000],
  ['Bad', 0x80000000],
  ['BadUnexpectedError', 0x80010000],
  ['BadInternalError', 0x80020000],
  ['BadCommunicationError', 0x80050000],
  ['BadTimeout', 0x800a0000],
  ['BadShutdown', 0x800c0000],
  ['BadNoCommunication', 0x80310000],
  ['BadWaitingForInitialData', 0x80320000],
  ['BadNotReadable', 0x803a0000],
  ['BadOutOfRange', 0x803c0000],
  ['BadNotSupported', 0x803d0000],
  ['BadNotFound', 0x803e0000],
  ['BadTypeMismatch', 0x80740000],
  ['BadConfigurationError', 0x80890000],
  ['BadNotConnected', 0x808a0000],
  ['BadDeviceFailure', 0x808b0000],
  ['BadSensorFailure', 0x808c0000],
  ['BadOutOfService', 0x808d0000],
  ['BadNoData', 0x809b0000],
  ['BadDataLost', 0x809d0000],
  ['BadDataUnavailable', 0x809e0000],
  ['BadNoDataAvailable', 0x80b10000],
  ['BadAggregateInvalidInputs', 0x80d60000],
  ['BadDominantValueChanged', 0x80e10000],
  ['BadDependentValueChanged', 0x80e30000],
];

const NAME_BY_BASE = new Map(NAMED.map(([name, code]) => [code, name]));
const BASE_BY_NAME = new Map(NAMED.map(([name, code]) => [name.toLowerCase(), code]));

/** Flags of the low 16 bits, as written after the name in a symbol. */
const FLAGS: ReadonlyArray<readonly [string, number, number]> = [
  // [name, mask, value]
  ['StructureChanged', 0x8000, 0x8000],
  ['SemanticsChanged', 0x4000, 0x4000],
  ['Low', 0x0300, 0x0100],
  ['High', 0x0300, 0x0200],
  ['Constant', 0x0300, 0x0300],
  ['Overflow', 0x0080, 0x0080],
  ['Calculated', 0x0003, 0x0001],
  ['Interpolated', 0x0003, 0x0002],
  ['Partial', 0x0004, 0x0004],
  ['ExtraData', 0x0008, 0x0008],
  ['MultiValue', 0x0010, 0x0010],
];
const FLAG_BY_NAME = new Map(FLAGS.map((f) => [f[0].toLowerCase(), f]));
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

function parseSymbol(symbol: string): number | undefined {
  const [head, ...rest] = symbol.split(',').map((s) => s.trim().toLowerCase());
  let code = BASE_BY_NAME.get(head);
  if (code === undefined) return undefined;
  for (const part of rest) {
    const flag = FLAG_BY_NAME.get(part);
    if (!flag) return undefined;
    const [, mask, value] = flag;
    if ((code & mask) !== 0) return undefined;
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
    fromSymbol = parseSymbol(symbol);
    if (fromSymbol === undefined) throw badRequest(`${where}.symbol: ${JSON.stringify(symbol.slice(0, 100))} is not a known status symbol`);
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
