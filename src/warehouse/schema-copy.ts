import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { notADirectory } from './data-dir';

/**
 * A chDB data directory with the definitions of every database, table, view
 * and dictionary of `dataDir` and none of their rows, in a temporary
 * directory of its own: what a command that only reads the schema opens
 * while `npm start` holds `dataDir` (libchdb binds a directory to one
 * process). ClickHouse keeps each definition as a statement in a `.sql` file
 * under `metadata/` (an Atomic database's folder there is a link into
 * `store/`); chDB opening the copy attaches them as it attaches its own, each
 * table empty, so its analyzer resolves the same tables, columns and types.
 * Definitions are written to a temporary name and renamed into place, so a
 * running service never leaves a half-written one to copy.
 */
export interface SchemaCopy {
  readonly dir: string;
  remove(): void;
}

export function copySchema(dataDir: string): SchemaCopy {
  if (existsSync(dataDir) && !statSync(dataDir).isDirectory()) throw notADirectory(dataDir);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chdb-schema-'));
  const metadata = path.join(dataDir, 'metadata');
  if (existsSync(metadata)) {
    mkdirSync(path.join(dir, 'metadata'));
    for (const entry of readdirSync(metadata, { withFileTypes: true })) {
      const from = path.join(metadata, entry.name);
      const to = path.join(dir, 'metadata', entry.name);
      if (entry.isFile() && entry.name.endsWith('.sql')) {
        copyFileSync(from, to);
      } else if (entry.isSymbolicLink()) {
        // Into the data directory's store/; the copy's link points into the copy's own.
        const inside = path.relative(dataDir, path.resolve(metadata, readlinkSync(from)));
        if (inside.startsWith('..') || path.isAbsolute(inside)) throw new Error(`${from} links outside ${dataDir}: its tables cannot be copied`);
        copyDefinitions(path.join(dataDir, inside), path.join(dir, inside));
        symlinkSync(path.relative(path.dirname(to), path.join(dir, inside)), to);
      } else if (entry.isDirectory()) {
        copyDefinitions(from, to);
      }
    }
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The `.sql` files of one database's folder: its tables' definitions. */
function copyDefinitions(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.sql')) copyFileSync(path.join(from, entry.name), path.join(to, entry.name));
  }
}
