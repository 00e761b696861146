import { removeModelDirs } from './models/support';
import { runSuites } from './support/suites';

// The models, rollups and lifecycle suites, each with its own service, in one jest file: as three files each loaded
// Cube and compiled the models once more, 9-10 s of CPU a file (see support/suites.ts and docs/testing.md).
// models and rollups first, in their old file's order: Cube's caches and queues are module state that every service
// of one jest file shares, and with the lifecycle suites run before them rollups/restart's first answer after new rows
// was once the rollup from before them (1 of 3 runs, 2026-11-27, before 062fb3a fixed two builds of a rollup in one
// second); with that fix, rollups/refresh-worker's answer after a rebuild was once the table before it (1 of 2), which
// 2bf2aee fixed (Cube's list of rollup tables no longer kept); with both, that order passed 4 of 4 runs.
// lifecycle last: every service before it has closed, and each close waits for the statements chDB still runs
// (Warehouse.close), so none runs under its timings.
runSuites(__dirname, [
  'models/cube-fixtures',
  'models/hot-reload',
  'models/other-team',
  'models/shared-compile',
  'models/validate',
  'rollups/build-limits',
  'rollups/rollup',
  'rollups/refresh-worker',
  'rollups/restart',
  'lifecycle/connection-flood',
  'lifecycle/fair-queue',
  'lifecycle/health',
  'lifecycle/shutdown',
]);
// After the suites' own hooks (theirs are inside their describes), so no watcher sees its directory go.
afterAll(removeModelDirs);
