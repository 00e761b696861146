import { enableContractChecks, takeContractViolations } from './contract';

/**
 * Registered in package.json's jest setupFilesAfterEnv: every answer of the
 * data routes that a test receives must match the served OpenAPI document,
 * or that test fails, naming the request and the path that drifted.
 */
enableContractChecks();

function failOnViolations(): void {
  const violations = takeContractViolations();
  if (violations.length > 0) {
    throw new Error(`Answers drifted from the OpenAPI document (openapi/openapi.json), ${violations.length} problem(s):\n${violations.join('\n')}`);
  }
}

afterEach(failOnViolations);
// Requests made in beforeAll/afterAll hooks, or answered after their test ended.
afterAll(failOnViolations);
