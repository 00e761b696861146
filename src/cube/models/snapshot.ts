import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ModelsInvalid } from './problems';

export interface ModelFile {
  /** Relative to the models directory, as Cube names it in its errors. */
  fileName: string;
  content: string;
}

/**
 * The model files as read at one moment. Cube compiles from this copy, not
 * from the directory, so a half-saved edit never reaches a compile that is
 * already serving, and a version names exactly what was compiled.
 */
export interface ModelSnapshot {
  dir: string;
  files: ModelFile[];
  /** Digest of every file's name and content. */
  version: string;
  /** Cube's SchemaFileRepository interface. */
  repository: { localPath(): string; dataSchemaFiles(): Promise<ModelFile[]> };
}

// The extensions Cube 0.33's FileRepository reads (.jinja and .py need Cube's native addon, which this service does not have).
const MODEL_FILE = /\.(js|ya?ml|jinja|py)$/;

export async function readSnapshot(dir: string): Promise<ModelSnapshot> {
  let names: string[];
  try {
    names = await modelFileNames(dir);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(err as Error).message})`;
    throw new ModelsInvalid(dir, [{ file: '', message: `the models directory ${dir} ${reason} (CUBE_MODELS_DIR)` }]);
  }
  const files = await Promise.all(names.map(async (fileName) => ({ fileName, content: await readFile(path.join(dir, fileName), 'utf8') })));
  if (files.length === 0) {
    throw new ModelsInvalid(dir, [{ file: '', message: `the models directory ${dir} holds no model files (.yml, .yaml, .js)` }]);
  }
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file.fileName}\0${file.content}\0`);
  const version = hash.digest('hex').slice(0, 16);
  return { dir, files, version, repository: { localPath: () => dir, dataSchemaFiles: async () => files } };
}

async function modelFileNames(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && MODEL_FILE.test(entry.name))
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * What the model files look like from outside, without reading them: each
 * one's name, inode, size and change times. Any way of saving a file changes
 * it (written in place: size or mtime; renamed over: inode and ctime;
 * created or deleted: the names). Throws when the directory cannot be read.
 */
export async function directoryState(dir: string): Promise<string> {
  const names = await modelFileNames(dir);
  const stats = await Promise.all(
    names.map(async (name) => {
      try {
        const s = await stat(path.join(dir, name), { bigint: true });
        return `${name}\0${s.ino}\0${s.size}\0${s.mtimeNs}\0${s.ctimeNs}`;
      } catch {
        // Deleted between the listing and the stat: the next look sees it gone.
        return `${name}\0gone`;
      }
    }),
  );
  return stats.join('\n');
}
