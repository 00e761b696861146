import { cpSync, existsSync } from 'node:fs';

/**
 * Each jest worker gets its own copy of the global demo build: libchdb binds
 * one data directory per process and locks it, so two workers cannot share
 * one, and a test that adds rows sees only its own worker's. The copy is made
 * by the worker's first test file; ClickHouse's symlinks inside are relative,
 * so the copy is a whole, separate warehouse.
 */
const base = process.env.TEST_CHDB_DATA_BASE;
if (!base) throw new Error('TEST_CHDB_DATA_BASE is not set: run the tests through jest (global setup builds the data)');
const own = `${base}-worker-${process.env.JEST_WORKER_ID ?? '1'}`;
if (!existsSync(own)) cpSync(base, own, { recursive: true, verbatimSymlinks: true });
process.env.TEST_CHDB_DATA_DIR = own;
