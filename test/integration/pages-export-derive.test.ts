import { runSuites } from './support/suites';

// The explorer page, the export and the derive suites in one jest file: explorer and export as two files each loaded
// Cube and compiled the models once more, about half of each file's time; derive loads no Cube, and joins them so the
// tier's four long files are of about one length for its two workers (see docs/testing.md).
// demo-data (direct SQL, no Cube) came from api.test.ts: on a clean clone api.test.ts and lifecycle-models-rollups run
// on one worker, this file after operations-queries-limits on the other, and that worker ended 13-19 s sooner.
// First, before the derive suites' imports.
runSuites(__dirname, [
  'demo-data',
  'explorer/explorer',
  'export/export',
  'export/streaming',
  'derive/import',
  'derive/user-agents',
  'derive/built-in-agents',
  'derive/vectors',
]);
