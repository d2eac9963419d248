/**
 * A function's code: a zip file, read whole into memory within `CODE_LIMITS` (fflate; entries inflate on
 * its worker threads, so a large zip does not hold up the event loop). Its entries are
 * checked before anything is inflated: paths stay inside the directory they unpack to, the sizes they
 * declare stay within the limits (an entry inflates into a buffer of its declared size, so a zip bomb gets no
 * further than its declaration), and the handler file is there. Entries are written as plain files, so a
 * symbolic link in the zip is a file holding its target's name, not a link.
 */
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { unzip, unzipSync, type Unzipped } from 'fflate';

export const CODE_LIMITS = {
  zipBytes: 50 * 1024 * 1024,
  unpackedBytes: 250 * 1024 * 1024,
  entries: 10_000,
} as const;

/** Code that cannot be used; the message says why. */
export class CodeError extends Error {
  override readonly name = 'CodeError';
}

interface Entry {
  name: string;
  originalSize: number;
}

/** The path an entry unpacks to, relative to the directory; undefined for a directory entry. */
function entryPath(name: string): string | undefined {
  if (name.endsWith('/')) return undefined;
  const normal = posix.normalize(name);
  if (name.includes('\\') || name.includes('\0') || posix.isAbsolute(normal) || normal === '..' || normal.startsWith('../')) {
    throw new CodeError(`the zip file has an entry "${name}" whose path leaves the directory it unpacks to`);
  }
  return normal;
}

/** The handler's path as the function names it, checked as entries are. */
export function handlerPath(functionPath: string): string {
  const path = entryPath(functionPath);
  if (path === undefined) throw new CodeError(`functionPath "${functionPath}" names a directory, not a file`);
  return path;
}

function entries(zip: Uint8Array): Entry[] {
  const found: Entry[] = [];
  try {
    unzipSync(zip, {
      filter: (file) => {
        found.push({ name: file.name, originalSize: file.originalSize });
        return false;
      },
    });
  } catch (error) {
    throw new CodeError(`the file is not a zip file (${(error as Error).message})`);
  }
  return found;
}

/** Checks the zip's entries against the limits and the handler's presence; the paths of its files. */
export function checkCode(zip: Uint8Array, functionPath: string): Map<string, string> {
  if (zip.byteLength > CODE_LIMITS.zipBytes) throw new CodeError(`the zip file has ${zip.byteLength} bytes, more than the ${CODE_LIMITS.zipBytes} a function's code may have`);
  const list = entries(zip);
  if (list.length > CODE_LIMITS.entries) throw new CodeError(`the zip file has ${list.length} entries, more than the ${CODE_LIMITS.entries} a function's code may have`);
  let total = 0;
  const paths = new Map<string, string>();
  for (const e of list) {
    const path = entryPath(e.name);
    if (path === undefined) continue;
    total += e.originalSize;
    if (total > CODE_LIMITS.unpackedBytes) throw new CodeError(`the zip file unpacks to more than the ${CODE_LIMITS.unpackedBytes} bytes a function's code may have`);
    paths.set(e.name, path);
  }
  const handler = handlerPath(functionPath);
  if (![...paths.values()].includes(handler)) throw new CodeError(`the zip file has no ${handler} (the functionPath) in its root folder`);
  return paths;
}

function inflate(zip: Uint8Array, paths: Map<string, string>): Promise<Unzipped> {
  return new Promise((resolve, reject) =>
    unzip(zip, { filter: (file) => paths.has(file.name) }, (error, files) => (error ? reject(new CodeError(`the zip file cannot be unpacked: ${error.message}`)) : resolve(files))),
  );
}

/** Unpacks the checked zip into `dir` (which exists), its files owned by `owner` when given. */
export async function unpackCode(zip: Uint8Array, functionPath: string, dir: string, owner?: { uid: number; gid: number }): Promise<void> {
  const paths = checkCode(zip, functionPath);
  const files = await inflate(zip, paths);
  const made = new Set<string>();
  for (const [name, bytes] of Object.entries(files)) {
    const target = join(dir, paths.get(name)!);
    const parent = dirname(target);
    if (!made.has(parent)) {
      await mkdir(parent, { recursive: true, mode: 0o700 });
      made.add(parent);
    }
    await writeFile(target, bytes, { mode: 0o600 });
    if (owner) await chown(target, owner.uid, owner.gid);
  }
  if (owner) for (const d of made) await chownUp(d, dir, owner);
}

/** Hands the directories from `d` up to `root` to `owner`. */
async function chownUp(d: string, root: string, owner: { uid: number; gid: number }): Promise<void> {
  for (let at = d; at.startsWith(root); at = dirname(at)) {
    await chown(at, owner.uid, owner.gid);
    if (at === root) break;
  }
}

/** Checks that the zip unpacks whole (its entries' data too), into a directory removed afterwards. */
export async function checkUnpacks(zip: Uint8Array, functionPath: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'strata-deploy-'));
  try {
    await unpackCode(zip, functionPath, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
