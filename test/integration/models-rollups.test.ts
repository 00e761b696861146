import { removeModelDirs } from './models/support';
import { runSuites } from './support/suites';

// The models and rollups suites, each with its own service, in one jest file: as two files each loaded Cube and
// compiled the models once more, about half of each file's time (see docs/testing.md).
runSuites(__dirname, [
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
