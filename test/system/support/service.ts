import { spawn } from 'node:child_process';
import path from 'node:path';
import { childEnv, freePort, ROOT } from './child';
import { dataOf, load } from '../../integration/support/api';

/** `node dist/index.js` as a test runs it: on a free port, with an operator key, ready (`/readyz` 200). */
export interface BuiltService {
  port: number;
  /** The child's whole environment, for a command run beside it (the import that hands a file to its inbox). */
  env: NodeJS.ProcessEnv;
  /** Its stdout so far. */
  log(): string;
  /** A load of one query, which must answer 200: its rows. */
  load(query: Record<string, unknown>): Promise<Record<string, string>[]>;
  /** SIGTERM, and its exit. */
  stop(): Promise<void>;
}

export async function startBuilt(dataDir: string, key: string, vars: Record<string, string>): Promise<BuiltService> {
  const port = await freePort();
  const env = childEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
    CHDB_DATA_DIR: dataDir,
    API_KEYS_FILE: path.join(path.dirname(dataDir), `${path.basename(dataDir)}-api-keys.json`),
    API_KEYS: key,
    ...vars,
  });
  const child = spawn(process.execPath, ['dist/index.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  try {
    while (
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) before ready:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port,
    env,
    log: () => log,
    load: (query) => dataOf(load(url, query, { key })),
    stop,
  };
}
