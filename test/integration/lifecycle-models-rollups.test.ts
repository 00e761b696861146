import { removeModelDirs } from './models/support';
import { runSuites } from './support/suites';

// The lifecycle, models and rollups suites, each with its own service, in one jest file: as three files each loaded
// Cube and compiled the models once more, 9-10 s of CPU a file (see support/suites.ts and docs/testing.md).
// lifecycle first: its fair queue, flood and shutdown suites measure waits, so they run as in a file of their own,
// with no other suite's statements or heap before them.
runSuites(__dirname, [
  'lifecycle/connection-flood',
  'lifecycle/fair-queue',
  'lifecycle/health',
  'lifecycle/shutdown',
  'models/cube-fixtures',
  'models/hot-reload',
  'models/other-team',
  'models/shared-compile',
  'models/validate',
  'rollups/build-limits',
  'rollups/funnel-hourly',
  'rollups/funnel-rollup',
  'rollups/refresh-worker',
  'rollups/restart',
]);
// After the suites' own hooks (theirs are inside their describes), so no watcher sees its directory go.
afterAll(removeModelDirs);
