/**
 * A bound on how deeply mappings and lists nest in a suite file, checked before any step that walks the
 * document recursively (the YAML composer, conversion to data, schema validation): a file nested thousands
 * of levels deep gets a located message instead of a stack overflow. Suites need fewer than a dozen levels.
 */
import { CST, Lexer } from 'yaml';

export const MAX_NESTING = 64;
export const NESTING_MESSAGE = `mappings (objects) and lists nest more than ${MAX_NESTING} levels deep here, the most a suite file may`;

/**
 * The offset where nesting first exceeds MAX_NESTING, or undefined. One pass over the YAML tokens, stopping
 * at the first excess. Flow collections (`[`, `{`) are counted exactly; block nesting is counted by the
 * columns of the block items and keys that enclose a token, which never undercounts by more than half (a
 * list may sit at its parent key's column) and overcounts by at most the one scalar being read.
 */
export function findExcessNesting(text: string): number | undefined {
  let offset = 0;
  let lineStart = 0;
  let flow = 0;
  /** Columns of the block items and keys enclosing the current token, increasing. */
  const block: number[] = [];
  let scalarFollows = false;
  for (const token of new Lexer().lex(text)) {
    // Markers the lexer adds; they take no room in the text.
    if (token === CST.DOCUMENT || token === CST.FLOW_END) continue;
    if (token === CST.SCALAR) {
      scalarFollows = true;
      continue;
    }
    const at = offset;
    offset += token.length;
    const type = scalarFollows ? 'scalar' : CST.tokenType(token);
    scalarFollows = false;
    if (type === 'flow-map-start' || type === 'flow-seq-start') flow++;
    else if (type === 'flow-map-end' || type === 'flow-seq-end') flow = Math.max(0, flow - 1);
    else if (type === 'doc-start') block.length = 0;
    else if (flow === 0 && type !== null && BLOCK_CONTENT.has(type)) {
      const column = at - lineStart;
      while (block.length > 0 && block[block.length - 1] > column) block.pop();
      if (block[block.length - 1] !== column) block.push(column);
    }
    if (block.length + flow > MAX_NESTING) return at;
    const newline = token.lastIndexOf('\n');
    if (newline !== -1) lineStart = at + newline + 1;
  }
  return undefined;
}

const BLOCK_CONTENT = new Set<string>(['scalar', 'double-quoted-scalar', 'single-quoted-scalar', 'alias', 'seq-item-ind', 'explicit-key-ind']);
