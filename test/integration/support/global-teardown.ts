import { removeRunTemp } from '../../support/run-temp';

/** The demo build and each worker's copy of it are in the run's temporary directory, which goes with it. */
export default async function globalTeardown(): Promise<void> {
  removeRunTemp();
}
