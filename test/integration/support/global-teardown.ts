import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

export default async function globalTeardown(): Promise<void> {
  const base = process.env.TEST_CHDB_DATA_BASE;
  if (!base) return;
  const parent = path.dirname(base);
  const copies = readdirSync(parent).filter((name) => name.startsWith(`${path.basename(base)}-worker-`));
  for (const dir of [base, ...copies.map((name) => path.join(parent, name))]) rmSync(dir, { recursive: true, force: true });
}
