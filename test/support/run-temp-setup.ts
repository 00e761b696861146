import { makeRunTemp } from './run-temp';

/** The unit tier's global setup: its run's temporary directory (run-temp.ts). */
export default function setup(): void {
  makeRunTemp('unit');
}
