import type { Config } from './config';
import { createMetrics, type Metrics } from './metrics/registry';
import { openWarehouse, type Warehouse } from './warehouse/connection';

/**
 * Apart from src/assembly.ts, which loads Cube (3,900 modules, 3 s of a start): start-up opens the warehouse, checks
 * the data directory and builds the demo data with this alone, and loads Cube only after them.
 */

/** A warehouse whose statement queue reports its depth and waits to the service's metrics. */
export interface MeasuredWarehouse {
  warehouse: Warehouse;
  metrics: Metrics;
}

export async function openMeasuredWarehouse(config: Config): Promise<MeasuredWarehouse> {
  const metrics = createMetrics();
  const warehouse = await openWarehouse(config.warehouse, {
    depth: (waiting) => metrics.warehouseQueueDepth.set(waiting),
    waited: (seconds) => metrics.warehouseQueueWait.observe(seconds),
  });
  return { warehouse, metrics };
}
