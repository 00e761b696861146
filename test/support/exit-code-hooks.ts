/**
 * Jest sets process.exitCode to 1, printing "You are trying to `import` a file after the Jest environment has been
 * torn down", when work of a test file that has ended still runs and loads a module: a Cube call of a service that
 * outlived its file did, and the integration tier run in one process exited 1 after every test passed. On workers
 * a worker's exit code counts for nothing, so the file that runs next in the same process fails here, saying why,
 * and the code is cleared so that only it fails.
 */
function failOnExitCode(): void {
  const code = process.exitCode;
  if (code === undefined || code === 0) return;
  process.exitCode = undefined;
  throw new Error(
    `process.exitCode was set to ${code} before or during this file: work of an earlier test file went on after that file ended ` +
      '(see jest\'s "import a file after the Jest environment has been torn down" above, and close what the test opened)',
  );
}

beforeAll(failOnExitCode);
afterAll(failOnExitCode);
