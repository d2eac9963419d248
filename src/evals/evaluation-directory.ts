/**
 * The evaluation directory: where the root suite file is found, and the boundary every included file and
 * agent file must stay inside.
 */
import { statSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Looked for, in this order, when the command is given a directory; exactly one of them must exist. */
export const ROOT_FILE_NAMES = ['suite.yaml', 'suite.yml', 'suite.json'] as const;

export type RootLocation =
  | { ok: true; directory: string; rootFile: string }
  | { ok: false; reason: string };

export function locateRootFile(pathArgument: string): RootLocation {
  const absolute = resolve(pathArgument);
  const kind = fileKind(absolute);
  if (kind === 'file') return { ok: true, directory: dirname(absolute), rootFile: basename(absolute) };
  if (kind === 'missing') return { ok: false, reason: `${pathArgument}: no such file or directory` };
  const present = ROOT_FILE_NAMES.filter((name) => fileKind(join(absolute, name)) === 'file');
  if (present.length === 1) return { ok: true, directory: absolute, rootFile: present[0] };
  if (present.length === 0) {
    return { ok: false, reason: `${pathArgument}: no suite file in this directory (looked for ${ROOT_FILE_NAMES.join(', ')})` };
  }
  return {
    ok: false,
    reason: `${pathArgument}: more than one suite file (${present.join(', ')}); name the one to use`,
  };
}

function fileKind(absolute: string): 'file' | 'directory' | 'missing' {
  try {
    return statSync(absolute).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

export type InsideOutcome =
  | { ok: true; absolute: string; relative: string }
  | { ok: false; reason: string };

/** Resolves a path written in a suite file; refuses one that leaves the directory, even through a symbolic link. */
export function resolveInside(directory: string, written: string): InsideOutcome {
  if (isAbsolute(written)) {
    return { ok: false, reason: `expected a path relative to the evaluation directory, got the absolute path ${JSON.stringify(written)}` };
  }
  const absolute = resolve(directory, written);
  const outside = { ok: false as const, reason: `${JSON.stringify(written)} is outside the evaluation directory` };
  if (isOutside(relative(directory, absolute))) return outside;
  const real = realPaths(directory, absolute);
  if (real && isOutside(relative(real.directory, real.target))) {
    return { ...outside, reason: `${outside.reason} (through a symbolic link)` };
  }
  return { ok: true, absolute, relative: relative(directory, absolute).split(sep).join('/') || '.' };
}

/** Whether a path relative to some directory leads out of it. */
export function isOutside(relativePath: string): boolean {
  return relativePath === '..' || relativePath.startsWith(`..${sep}`) || isAbsolute(relativePath);
}

function realPaths(directory: string, target: string): { directory: string; target: string } | undefined {
  try {
    return { directory: realpathSync(directory), target: realpathSync(target) };
  } catch {
    // A missing target is reported when it is read.
    return undefined;
  }
}
