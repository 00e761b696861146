/**
 * Advice Cube prints (see routeConsole in src/log.ts) that does not apply to
 * this service, so it is logged at debug only.
 *
 * "Using undefined as an external database is deprecated. Please use Cube
 * Store instead": printed at every start outside NODE_ENV=production (Cube's
 * dev mode) because no Cube Store is configured. The service uses no external
 * database: rollups are built in ClickHouse itself (`external: false`).
 */
export const INAPPLICABLE_CUBE_ADVICE: readonly RegExp[] = [/as an external database is deprecated/];
