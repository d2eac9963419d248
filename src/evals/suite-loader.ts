/**
 * Loads a suite: the root file and, depth first, every file it includes. Checks each file against the
 * schema, then the rules that only the whole suite can break: file-level tags in the root file, include
 * cycles, files outside the evaluation directory or included twice, and case ids used twice. A suite has
 * at most MAX_SUITE_FILES files of at most MAX_SUITE_BYTES together, so a hostile suite cannot make the
 * command read without end.
 */
import { join } from 'node:path';
import {
  diagnosticAt,
  fileDiagnostics,
  formatPosition,
  sortDiagnostics,
  type Diagnostic,
  type DocumentProblem,
  type PathSegment,
} from './diagnostics.js';
import { resolveInside } from './evaluation-directory.js';
import { MAX_FILE_BYTES, parseSource, readText, type ParsedSource } from './source-file.js';
import { checkSuiteDocument } from './suite-schema.js';
import type { SuiteDocument } from './suite-types.js';

/** The most files a suite may have, the root file included. */
export const MAX_SUITE_FILES = 1000;
/** The most bytes a suite's files may have together. */
export const MAX_SUITE_BYTES = 50 * 1024 * 1024;

export interface SuiteFile {
  /** Relative to the evaluation directory, with `/` separators. */
  path: string;
  document: SuiteDocument;
  /** The file whose `include` named this one; absent for the root file. */
  includedBy?: SuiteFile;
}

export interface LoadedSuite {
  directory: string;
  root: SuiteFile;
  /** Root first, then included files depth first, in the order of each `include` list. */
  files: SuiteFile[];
}

export interface SuiteCheck {
  /** Files that were read, in load order. */
  files: string[];
  caseCount: number;
  diagnostics: Diagnostic[];
  /** Present only when there are no diagnostics: a suite that can be trusted to have the documented shape. */
  suite?: LoadedSuite;
}

interface IncludeSite {
  file: ReadFile;
  path: PathSegment[];
}

interface ReadFile {
  path: string;
  data: unknown;
  source: ParsedSource;
  includedBy?: ReadFile;
}

export function loadSuite(directory: string, rootFile: string): SuiteCheck {
  const read: ReadFile[] = [];
  const attempted: string[] = [];
  const diagnostics: Diagnostic[] = [];
  const firstIncludedAt = new Map<string, string>();

  const report = (file: ReadFile, problem: DocumentProblem, unreadable = false) => {
    diagnostics.push(diagnosticAt(file.path, file.source.locate, problem, unreadable));
  };

  let bytesRead = 0;
  let limitReported = false;

  const load = (path: string, includeSite: IncludeSite | undefined, chain: string[]) => {
    const unreadable = (reason: string) => {
      // An included file is reported at the include entry that names it; the root has only itself.
      if (includeSite) report(includeSite.file, { path: includeSite.path, message: `cannot read ${JSON.stringify(path)}: ${reason}` }, true);
      else diagnostics.push(...fileDiagnostics(path, [{ message: `cannot read the file: ${reason}` }], true));
    };
    // A suite past its limits is reported once, at the first file not read, not once per further include.
    const overLimit = (reason: string) => {
      if (!limitReported) unreadable(reason);
      limitReported = true;
    };
    if (attempted.length === MAX_SUITE_FILES) return overLimit(`the suite already has ${MAX_SUITE_FILES} files, the most it may have`);
    const budget = MAX_SUITE_BYTES - bytesRead;
    const text = readText(join(directory, path), Math.min(MAX_FILE_BYTES, budget));
    if (!text.ok) {
      if (text.tooLarge && budget < MAX_FILE_BYTES) return overLimit(`the suite's files would together exceed ${MAX_SUITE_BYTES} bytes, the limit`);
      return unreadable(text.reason);
    }
    bytesRead += Buffer.byteLength(text.text);
    attempted.push(path);
    const parsed = parseSource(text.text, path);
    if (!parsed.ok) {
      diagnostics.push(...fileDiagnostics(path, parsed.problems));
      return;
    }
    const includedBy = includeSite?.file;
    const file: ReadFile = { path, data: parsed.source.data, source: parsed.source, includedBy };
    read.push(file);
    for (const problem of checkSuiteDocument(file.data)) report(file, problem);
    if (!includedBy && ownProperty(file.data, 'tags') !== undefined) {
      report(file, { path: [], key: 'tags', message: 'file-level "tags" are allowed in included files only, not in the root file' });
    }
    const includes = ownProperty(file.data, 'include');
    if (Array.isArray(includes)) {
      includes.forEach((entry: unknown, index) => {
        if (typeof entry === 'string' && entry !== '') follow(file, index, entry, [...chain, path]);
      });
    }
  };

  const follow = (file: ReadFile, index: number, entry: string, chain: string[]) => {
    const site: IncludeSite = { file, path: ['include', index] };
    const problem = (message: string) => report(file, { path: site.path, message });
    const target = resolveInside(directory, entry);
    if (!target.ok) return problem(target.reason);
    const cycleStart = chain.indexOf(target.relative);
    if (cycleStart !== -1) {
      return problem(`include cycle: ${[...chain.slice(cycleStart), target.relative].join(' -> ')}`);
    }
    const earlier = firstIncludedAt.get(target.relative);
    if (earlier) return problem(`${JSON.stringify(target.relative)} is already included at ${earlier}; a file can be included only once`);
    firstIncludedAt.set(target.relative, formatPosition(file.path, file.source.locate(site.path)));
    load(target.relative, site, chain);
  };

  load(rootFile, undefined, []);
  diagnostics.push(...duplicateCaseIds(read));
  const caseCount = read.reduce((count, file) => count + casesOf(file.data).length, 0);
  const check: SuiteCheck = { files: attempted, caseCount, diagnostics: sortDiagnostics(diagnostics, attempted) };
  if (read.length > 0 && diagnostics.length === 0) check.suite = trustedSuite(directory, read);
  return check;
}

function duplicateCaseIds(files: readonly ReadFile[]): Diagnostic[] {
  const firstSeen = new Map<string, string>();
  const diagnostics: Diagnostic[] = [];
  for (const file of files) {
    casesOf(file.data).forEach((entry, index) => {
      const id = ownProperty(entry, 'id');
      if (typeof id !== 'string' || id === '') return;
      const path = ['cases', index, 'id'];
      const position = file.source.locate(path);
      const earlier = firstSeen.get(id);
      if (!earlier) {
        firstSeen.set(id, formatPosition(file.path, position));
        return;
      }
      const message = `duplicate case id ${JSON.stringify(id)} (first used at ${earlier})`;
      diagnostics.push({ file: file.path, position, path, message });
    });
  }
  return diagnostics;
}

function trustedSuite(directory: string, files: readonly ReadFile[]): LoadedSuite {
  const converted = new Map<ReadFile, SuiteFile>();
  for (const file of files) {
    const includedBy = file.includedBy && converted.get(file.includedBy);
    converted.set(file, { path: file.path, document: file.data as SuiteDocument, ...(includedBy ? { includedBy } : {}) });
  }
  const suiteFiles = [...converted.values()];
  return { directory, root: suiteFiles[0], files: suiteFiles };
}

function casesOf(data: unknown): unknown[] {
  const cases = ownProperty(data, 'cases');
  return Array.isArray(cases) ? cases : [];
}

function ownProperty(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}
