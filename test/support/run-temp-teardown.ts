import { removeRunTemp } from './run-temp';

/** The unit and system tiers' global teardown (run-temp.ts). */
export default function teardown(): void {
  removeRunTemp();
}
