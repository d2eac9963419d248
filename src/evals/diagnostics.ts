/**
 * A problem found in an evaluation suite, and how it is printed:
 * `file:line:column: location: message`, the form editors and terminals turn into links.
 */

export type PathSegment = string | number;

export interface Position {
  line: number;
  column: number;
}

export interface Diagnostic {
  /** Path of the file, relative to the evaluation directory. */
  file: string;
  position?: Position;
  /** Where in the document, e.g. ['cases', 2, 'turns', 0] (empty for the top level); absent when about the file as a whole. */
  path?: PathSegment[];
  message: string;
  /** A file the suite needs could not be read, so the suite could not be checked as a whole. */
  unreadable?: boolean;
}

/** A problem inside one parsed document, not yet tied to a file and position. */
export interface DocumentProblem {
  /** The value the problem is about (for a problem with one property: the object holding it). */
  path: PathSegment[];
  /** Set when the problem is one key of the object at `path`, so the position points at that key. */
  key?: string;
  message: string;
}

export type Locator = (path: readonly PathSegment[], key?: string) => Position | undefined;

export function diagnosticAt(file: string, locate: Locator, problem: DocumentProblem, unreadable = false): Diagnostic {
  const diagnostic: Diagnostic = { file, position: locate(problem.path, problem.key), path: problem.path, message: problem.message };
  if (unreadable) diagnostic.unreadable = true;
  return diagnostic;
}

/** Problems found before there is a document to point into (unreadable or malformed files). */
export function fileDiagnostics(file: string, problems: readonly { position?: Position; message: string }[], unreadable = false): Diagnostic[] {
  return problems.map(({ position, message }) => ({ file, position, message, ...(unreadable ? { unreadable } : {}) }));
}

export const EXIT_VALID = 0;
const EXIT_INVALID = 1;
/** A file cannot be read, or the command line is wrong: the suite could not be judged. */
export const EXIT_CANNOT_CHECK = 2;

export function exitCodeFor(diagnostics: readonly Diagnostic[]): number {
  if (diagnostics.some((d) => d.unreadable)) return EXIT_CANNOT_CHECK;
  return diagnostics.length > 0 ? EXIT_INVALID : EXIT_VALID;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

export function formatPath(path: readonly PathSegment[]): string {
  if (path.length === 0) return 'top level';
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

export function formatPosition(file: string, position: Position | undefined): string {
  return position ? `${file}:${position.line}:${position.column}` : file;
}

export function formatDiagnostic(diagnostic: Diagnostic): string {
  const where = diagnostic.path ? `${formatPath(diagnostic.path)}: ` : '';
  return `${formatPosition(diagnostic.file, diagnostic.position)}: ${where}${diagnostic.message}`;
}

/** Orders diagnostics by file (in the given order), then by position, so output reads top to bottom. */
export function sortDiagnostics(diagnostics: Diagnostic[], fileOrder: readonly string[]): Diagnostic[] {
  const rank = (file: string) => {
    const index = fileOrder.indexOf(file);
    return index === -1 ? fileOrder.length : index;
  };
  const place = (d: Diagnostic) => [rank(d.file), d.position?.line ?? 0, d.position?.column ?? 0];
  return [...diagnostics].sort((a, b) => {
    const [pa, pb] = [place(a), place(b)];
    return pa[0] - pb[0] || pa[1] - pb[1] || pa[2] - pb[2];
  });
}
