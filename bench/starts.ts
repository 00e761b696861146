import path from 'node:path';
import { parseArgs } from 'node:util';
import { log } from './report';
import { startBenchService } from './service';

/**
 * Service starts in one process (issue 16): `npm run bench:starts -- --data-dir DIR [--starts 8]`. DIR holds a
 * finished demo build (`npm run warehouse -- demo`). Starts the service on DIR, waits until its rollups have caught
 * up (as the integration tests do before each suite), and closes it, `--starts` times. The first start
 * loads Cube's modules; the later ones are what each further service of an integration worker costs. Reports each
 * start's wall time, this process's CPU time over it (chDB's threads included) and the statements it ran (the
 * statement queue's count).
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, starts: { type: 'string', default: '8' } } });
  if (!values['data-dir']) throw new Error('--data-dir DIR is required (a finished demo build)');
  const dataDir = path.resolve(values['data-dir']);
  const count = Number(values.starts);
  if (!Number.isInteger(count) || count < 2) throw new Error(`--starts ${values.starts}: expected a whole number of at least 2`);
  const later: { wall: number; cpu: number; statements: number }[] = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const service = await startBenchService(dataDir, { DEMO_DATA: 'false', EXPLORER: 'false', CUBE_ROLLUP_REFRESH_SECONDS: '0', DATA_REFRESH_SECONDS: '0' });
    await service.cube.caughtUp();
    const used = process.cpuUsage(cpu);
    const wall = performance.now() - started;
    const statements = (await service.metrics.warehouseQueueWait.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
    await service.close();
    log(`start ${i + 1}: ${wall.toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU, ${statements} statements`);
    if (i > 0) later.push({ wall, cpu: (used.user + used.system) / 1000, statements });
  }
  const summary = (name: string, values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `${name} median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} (${sorted[0].toFixed(0)}–${sorted.at(-1)?.toFixed(0)})`;
  };
  log(
    `later starts (${later.length}): ${summary(
      'wall ms',
      later.map((s) => s.wall),
    )}; ${summary(
      'CPU ms',
      later.map((s) => s.cpu),
    )}; ` +
      `${summary(
        'statements',
        later.map((s) => s.statements),
      )}`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
