// Three tiers, run apart by scripts/test-tiers.js (npm test):
//  unit         no engine and no data build; parallel workers.
//  integration  the real service on chDB over the global demo build, copied once per worker because libchdb
//               binds one data directory per process (support/worker-data.ts).
//  system       the built server (`npm run build`, once, in global setup) in child processes.
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json' }] };
// Jest runs every module (Cube's and its dependencies' too) in a vm context, where each read of a global such as
// `Math` or `Object` goes through the context's interceptor instead of an inline cache: Cube's ANTLR parse of the YAML
// models ran 4-5 times slower than in plain node (4 million `Math.imul` calls in its hash function). Jest passes the
// globals named here to each module as parameters, read once (docs/guides/testing.md, "Where the time goes"). Only built-ins
// that no test replaces and that no module declares at its top level (a module's `const Buffer`, or graphql-scalars'
// `const JSON`, would no longer parse); Date and the timers stay globals for jest's fake timers.
const sandboxInjectedGlobals = [
  'Math',
  'Object',
  'Array',
  'String',
  'Number',
  'Boolean',
  'Symbol',
  'Error',
  'TypeError',
  'RegExp',
  'Map',
  'Set',
  'WeakMap',
  'Promise',
  'Reflect',
  'parseInt',
  'isNaN',
  'BigInt',
  'Uint8Array',
  'Function',
  'Proxy',
];
// Every file fails when a file before it in the same process left work running (test/support/exit-code-hooks.ts).
const exitCodeHooks = '<rootDir>/test/support/exit-code-hooks.ts';
const base = { preset: 'ts-jest', testEnvironment: 'node', transform, sandboxInjectedGlobals, setupFilesAfterEnv: [exitCodeHooks] };

/** @type {import('jest').Config} */
module.exports = {
  // Hooks start services and compile models; two workers share two cores, so the margin is wide.
  testTimeout: 120000,
  // Longest first, a folder's file of suites weighed by its suites (a global option: every project).
  testSequencer: '<rootDir>/test/sequencer.js',
  projects: [
    {
      ...base,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit'],
      globalSetup: '<rootDir>/test/support/run-temp-setup.ts',
      globalTeardown: '<rootDir>/test/support/run-temp-teardown.ts',
    },
    {
      ...base,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      globalSetup: '<rootDir>/test/integration/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/integration/support/global-teardown.ts',
      // openapi-backend requires @apidevtools/json-schema-ref-parser, an ES module jest cannot load.
      moduleNameMapper: { '^@apidevtools/json-schema-ref-parser$': '<rootDir>/test/integration/support/esm/json-schema-ref-parser.cjs' },
      setupFiles: ['<rootDir>/test/integration/support/worker-data.ts', '<rootDir>/test/integration/support/clock.ts'],
      setupFilesAfterEnv: [
        exitCodeHooks,
        '<rootDir>/test/integration/support/contract-hooks.ts',
        '<rootDir>/test/integration/support/default-service-hooks.ts',
      ],
    },
    {
      ...base,
      displayName: 'system',
      roots: ['<rootDir>/test/system'],
      globalSetup: '<rootDir>/test/system/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/run-temp-teardown.ts',
    },
  ],
};
