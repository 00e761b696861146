import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { parseConfig, type Config } from './config';
import { ServiceError } from './errors';
import { createCubeService, type CubeService, type CubeServiceOptions } from './cube/service';
import { createExporter } from './export/exporter';
import { createAdmission, type Admission } from './query/admission';
import { createApp } from './http/app';
import { memoryStores, redisStores } from './http/limit-stores';
import { createShutdownGate, type ShutdownGate } from './http/shutdown-gate';
import { createAuthenticator } from './keys/authenticator';
import { revokeErasedKeys } from './keys/erased';
import { openKeyRing, type KeyRing } from './keys/ring';
import { createKey } from './keys/store';
import type { Logger } from './log';
import { openMeasuredWarehouse, type MeasuredWarehouse } from './measured-warehouse';
import { createReadiness, type Readiness } from './readiness';
import { connectRedis, type RedisLink } from './redis/link';
import { loadUserAgents } from './warehouse/derive/user-agents';
import { followImports } from './warehouse/import/follow';
import { watchInbox } from './warehouse/import/inbox';
import { reduceAgedData } from './warehouse/retention';

/**
 * The one wiring of the service's parts, shared by production (src/index.ts),
 * the tests (test/integration/support/service.ts) and the benchmarks (bench/),
 * so that a change to it reaches all three. What only production does (listening, building the tables, exiting
 * on bad models, the metrics server, signals) stays in index.ts.
 */

export interface AssemblyOptions extends Pick<CubeServiceOptions, 'continueWaitSeconds' | 'modelsPollMs'> {
  config: Config;
  logger: Logger;
  /**
   * Opened already (production opens it before listening, to check and build
   * the tables); opened here otherwise. Either way the service closes it.
   */
  measured?: MeasuredWarehouse;
  /** Recompile when the model files change. */
  watchModels: boolean;
  /** The models' folder, instead of CUBE_MODELS_DIR. */
  schemaPath?: string;
  /**
   * Wait until the models compile and validate before building the app (the
   * default); false to serve models that never do.
   */
  waitForModels?: boolean;
  /**
   * On chDB, take the import command's files through the inbox
   * (src/warehouse/import/inbox.ts), and have Cube's answers follow each
   * import before its summary goes back.
   */
  importInbox?: boolean;
}

export interface AssembledService extends MeasuredWarehouse {
  app: Express;
  cube: CubeService;
  admission: Admission;
  readiness: Readiness;
  gate: ShutdownGate;
  ring: KeyRing;
  /** The rate limits' shared store, when REDIS_URL is set. */
  redis: RedisLink | undefined;
  /** Releases every part, the warehouse last. */
  close(): Promise<void>;
}

/**
 * Opens the key ring and Cube, waits for the models, then builds the app on
 * them. Rejects with the models' ModelsInvalid, or whatever else failed,
 * after releasing what it opened. A warehouse that cannot be reached to
 * check the models is no such failure: the service is then not ready until
 * it can be.
 */
export async function assembleService(options: AssemblyOptions): Promise<AssembledService> {
  const { config, logger, waitForModels = true } = options;
  const { warehouse, metrics } = options.measured ?? (await openMeasuredWarehouse(config));
  // Each part's release, in the order the parts were opened; released in reverse, so none outlives one it uses.
  const releases: (() => unknown)[] = [() => warehouse.close()];
  const close = async () => {
    for (const release of releases.splice(0).reverse()) await release();
  };
  try {
    // Erasures made while no service ran (the command against the warehouse itself) revoke their keys here.
    await revokeErasedKeys(warehouse, config.keys.file).catch((err: unknown) =>
      logger.error('the keys of erased accounts could not be revoked; run the start again once the warehouse answers', { error: String(err) }),
    );
    const ring = await openKeyRing({
      file: config.keys.file,
      reloadIntervalMs: config.keys.reloadIntervalMs,
      logger,
      onReloadFailure: () => metrics.keyFileReloadFailures.inc(),
    });
    releases.push(() => ring.close());
    const cube = createCubeService({
      warehouse,
      query: config.query,
      logger,
      metrics,
      schemaPath: options.schemaPath ?? config.models.dir,
      watchModels: options.watchModels,
      continueWaitSeconds: options.continueWaitSeconds,
      modelsPollMs: options.modelsPollMs,
      rollupRefreshSeconds: config.rollups.refreshSeconds,
      funnel: config.funnel,
      retention: config.retention,
      rollupBuildLimits: { timeoutMs: config.rollups.buildTimeoutMs, maxMemoryBytes: config.rollups.buildMaxMemoryBytes },
    });
    releases.push(() => cube.close());
    if (waitForModels) await modelsReady(cube, logger);
    const authenticator = createAuthenticator({ operatorKeys: config.apiKeys, ring });
    /** After an erasure: the accounts' rollups rebuilt without the rows, then the builds from before dropped. */
    const rollupsFollow = async (accounts: readonly string[]) => {
      await cube.dataChanged(accounts.map((account) => ({ account })));
      return cube.dropSupersededRollups();
    };
    /** Revokes the keys of accounts erased (src/keys/erased.ts) and has the ring read them at once. */
    const revokeKeys = async () => {
      const revoked = await revokeErasedKeys(warehouse, config.keys.file);
      if (revoked > 0) await ring.reload();
      return revoked;
    };
    const readiness = createReadiness({ warehouse, cube });
    const gate = createShutdownGate();
    const redis = config.rateLimit.redisUrl === undefined ? undefined : connectRedis(config.rateLimit.redisUrl, logger, metrics.registry);
    if (redis) releases.push(() => redis.close());
    const admission = createAdmission(config.query, cube.admissionModel);
    const exporter = createExporter({ cube, warehouse, limits: config.query, caps: config.exports });
    const app = createApp({
      config,
      cube,
      admission,
      exporter,
      authenticator,
      logger,
      readiness,
      gate,
      metrics,
      limitStores: redis ? redisStores(redis) : memoryStores,
    });
    if (options.importInbox && config.warehouse.kind === 'chdb') {
      const inbox = watchInbox(
        config.warehouse.dataDir,
        warehouse.client(),
        {
          database: config.warehouse.database,
          trackingPrefix: config.downloads.trackingPrefix,
          derivation: { settings: config.downloads, userAgents: loadUserAgents(config.downloads.userAgentsDir), addressDays: config.retention.addressDays },
          statementRows: config.importStatementRows,
        },
        logger,
        {
          imported: (summary) => cube.dataChanged(summary.accounts.map((account) => ({ account }))),
          forgotten: async (erasure, summary) => {
            const rollupsDropped = summary.accounts.length > 0 ? await rollupsFollow(summary.accounts) : 0;
            return { rollupsDropped, ...(erasure.kind === 'account' ? { keysRevoked: await revokeKeys() } : {}) };
          },
        },
      );
      releases.push(() => inbox.stop());
    } else if (config.dataRefreshSeconds > 0) {
      // Imports reach this service's warehouse from elsewhere (a ClickHouse server): it looks for them.
      const follower = followImports(
        warehouse.client(),
        config.warehouse.database,
        config.dataRefreshSeconds * 1000,
        (changes) => cube.dataChanged(changes),
        logger,
        async () => {
          // An erasure's record names no account: every account a key reads follows it.
          await revokeKeys();
          await rollupsFollow([...new Set(ring.keys().map((key) => key.record.account))]);
        },
      );
      releases.push(() => follower.stop());
    }
    if (config.warehouse.kind === 'chdb' && config.retention.addressDays > 0) {
      // Addresses age while the service runs, and on chDB nothing but the service can reduce them (on a server, `init`).
      const reducing = setInterval(() => {
        reduceAgedData({ client: warehouse.client(), database: config.warehouse.database, settings: config, logger }).catch((error: unknown) =>
          logger.error('stored addresses could not be reduced; trying again within the hour', { error: String(error) }),
        );
      }, AGED_DATA_CHECK_MS);
      reducing.unref();
      releases.push(() => clearInterval(reducing));
    }
    return { app, cube, admission, readiness, gate, warehouse, metrics, ring, redis, close };
  } catch (err) {
    // The failure that stopped the start is the one to report, not one met while releasing.
    await close().catch((error: unknown) => logger.warn('releasing the parts of a failed start failed', { error: String(error) }));
    throw err;
  }
}

/** How often a service on chDB reduces the addresses that passed ADDRESS_RETENTION_DAYS since. */
const AGED_DATA_CHECK_MS = 3_600_000;

async function modelsReady(cube: CubeService, logger: Logger): Promise<void> {
  try {
    await cube.models.ready();
  } catch (err) {
    // A ClickHouse server that is down is no reason not to start: /readyz
    // says not ready and queries answer 503 until the models can be checked.
    if (!(err instanceof ServiceError && err.code === 'warehouse_unavailable')) throw err;
    logger.error('the warehouse cannot be reached to check the models; not ready until it can', { detail: err.detail });
  }
}

export interface LocalServiceOptions extends Omit<AssemblyOptions, 'config' | 'measured' | 'watchModels'> {
  /** The environment the configuration is read from, as at start-up (CHDB_DATA_DIR, limits, API_KEYS…). */
  env: Record<string, string | undefined>;
  /** Accounts to make a key for, in a fresh key file of the service's own. */
  accounts?: readonly string[];
  watchModels?: boolean;
}

export interface LocalService extends AssembledService {
  config: Config;
  /** A key of each account asked for, by account id. */
  accountKeys: Record<string, string>;
}

/**
 * The service in this process without a listening socket, configured from
 * `env` and with a key file of its own: how the tests and the benchmarks
 * start it, through the same wiring as production.
 */
export async function assembleLocalService({ env, accounts = [], watchModels = false, ...options }: LocalServiceOptions): Promise<LocalService> {
  const keyDir = mkdtempSync(path.join(os.tmpdir(), 'analytics-api-keys-'));
  const removeKeys = () => rmSync(keyDir, { recursive: true, force: true });
  try {
    const keyFile = path.join(keyDir, 'api-keys.json');
    const accountKeys: Record<string, string> = {};
    for (const account of accounts) {
      accountKeys[account] = (await createKey(keyFile, { account, name: `local ${account}` })).key;
    }
    const config = parseConfig({ API_KEYS_FILE: keyFile, ...env });
    const service = await assembleService({ ...options, config, watchModels });
    const close = async () => {
      try {
        await service.close();
      } finally {
        removeKeys();
      }
    };
    return { ...service, config, accountKeys, close };
  } catch (error) {
    removeKeys();
    throw error;
  }
}
