import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const dataDir = process.env.TEST_CHDB_DATA_DIR;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
