import { runSuites } from './support/suites';

// The explorer page and the export suites in one jest file: as two files each loaded Cube and compiled the models
// once more, about half of each file's time (see docs/testing.md).
runSuites(__dirname, ['explorer/explorer', 'export/export', 'export/streaming']);
