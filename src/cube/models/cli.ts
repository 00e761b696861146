import { parseArgs } from 'node:util';
// Before chdb: the allocator's options are read when the library loads.
import '../../warehouse/allocator';
import { drainPending } from 'chdb';
import { ConfigError, loadConfig, type Config } from '../../config';
import { createLogger, routeConsole } from '../../log';
import { INAPPLICABLE_CUBE_ADVICE } from '../console-advice';
import { createMetrics } from '../../metrics/registry';
import { openWarehouse } from '../../warehouse/connection';
import { WarehouseSetupError } from '../../warehouse/data-dir';
import { copySchema, type SchemaCopy } from '../../warehouse/schema-copy';
import { ServiceError } from '../../errors';
import { createCubeService } from '../service';
import { formatProblems, ModelsInvalid } from './problems';

const USAGE = `Usage: npm run models -- <command>

Commands (on the warehouse the service is configured with: CHDB_DATA_DIR or CLICKHOUSE_URL;
with chDB, on a copy of its tables' definitions, so they run while npm start holds it):
  validate [--strict] [--dir <dir>]
        compile the models as the service does and check them. Problems, which
        the service refuses to start or reload with: Cube's own errors, a name
        defined twice, and the account rule (a cube reading a table with an
        account_id column restricts by account unless its file declares
        "# access: public"). Warnings, which it serves with: a measure without
        a description, and a member whose SQL cannot be generated or run (left
        out; queries naming it are refused). Prints each; exits 1 on a problem,
        and with --strict on a warning too
  sql '<query JSON>' [--account <id>] [--dir <dir>]
        print the SQL and parameters Cube generates for the query, for the
        account's key (default: an operator key, which reads every account)
  help  show this text

--dir defaults to CUBE_MODELS_DIR (schema/).
`;

export interface ModelsCliIo {
  config: Config;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

class UsageError extends Error {}

/** `npm run models -- …`, returning the exit code: 0 done, 1 problems found or failed, 2 bad usage. */
export async function runModelsCli(argv: string[], io: ModelsCliIo): Promise<number> {
  let command: string | undefined;
  let dir: string;
  let account: string | undefined;
  let strict = false;
  let query: Record<string, unknown> | undefined;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { dir: { type: 'string' }, account: { type: 'string' }, strict: { type: 'boolean' } },
      allowPositionals: true,
    });
    [command] = positionals;
    dir = values.dir ?? io.config.models.dir;
    account = values.account;
    strict = values.strict ?? false;
    if (command === undefined || command === 'help') {
      io.stdout(USAGE);
      return 0;
    }
    if (command === 'validate') {
      if (positionals.length > 1 || account !== undefined) throw new UsageError('validate takes only --strict and --dir');
    } else if (strict) {
      throw new UsageError('--strict is an option of validate');
    } else if (command === 'sql') {
      if (positionals.length !== 2) throw new UsageError('sql needs one query, as JSON in quotes: sql \'{"measures":["Downloads.count"]}\'');
      query = parseQuery(positionals[1]);
      if (account === '') throw new UsageError('--account needs an account id');
    } else {
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    const parseError = typeof err === 'object' && err !== null && String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    if (err instanceof UsageError || parseError) {
      io.stderr(`error: ${(err as Error).message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }

  const logger = createLogger('error', (line) => io.stderr(line));
  const warehouse = await openWarehouse(io.config.warehouse);
  // A registry of its own: the CLI serves no /metrics.
  const cube = createCubeService({
    warehouse,
    query: io.config.query,
    funnel: io.config.funnel,
    retention: io.config.retention,
    logger,
    metrics: createMetrics(),
    schemaPath: dir,
  });
  try {
    await cube.models.ready();
    if (query === undefined) {
      const warnings = cube.models.warnings();
      if (strict && warnings.length > 0) {
        io.stdout(`${dir}: ${count(warnings.length, 'problem')} (warnings, refused under --strict)\n${formatProblems(warnings)}\n`);
        return 1;
      }
      const tail = warnings.length > 0 ? `, with ${count(warnings.length, 'warning')}:\n${formatProblems(warnings)}` : '.';
      io.stdout(`${dir}: the models compile and pass every check${tail}\n`);
      return 0;
    }
    const { sql, params } = await cube.models.sql(query, { requestId: 'models-cli', accountId: account ?? null });
    io.stdout(`${sql}\n\n-- parameters: ${JSON.stringify(params)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ModelsInvalid) {
      const problems = strict ? [...err.problems, ...err.warnings] : err.problems;
      const warnings = strict || err.warnings.length === 0 ? '' : `${dir}: ${count(err.warnings.length, 'warning')}\n${formatProblems(err.warnings)}\n`;
      io.stdout(`${dir}: ${count(problems.length, 'problem')}\n${formatProblems(problems)}\n${warnings}`);
      return 1;
    }
    if (err instanceof ServiceError) {
      io.stderr(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await cube.close();
    await warehouse.close();
  }
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

function parseQuery(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`the query is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError('the query must be a JSON object, e.g. {"measures":["Downloads.count"]}');
  return value as Record<string, unknown>;
}

if (require.main === module) {
  let config: Config;
  let schema: SchemaCopy | undefined;
  try {
    config = loadConfig();
    // The commands read the schema, never rows: on chDB, a copy of the data directory's definitions, which
    // `npm start` holding the directory does not stop.
    if (config.warehouse.kind === 'chdb') {
      schema = copySchema(config.warehouse.dataDir);
      config = { ...config, warehouse: { ...config.warehouse, dataDir: schema.dir } };
    }
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError || err instanceof WarehouseSetupError ? err.message : String(err)}\n`);
    process.exit(1);
  }
  const exit = (code: number) => {
    schema?.remove();
    process.exit(code);
  };
  const io = { config, stdout: (s: string) => process.stdout.write(s), stderr: (s: string) => process.stderr.write(s) };
  // stdout is the report; what Cube prints goes to stderr as log lines.
  routeConsole(createLogger('warn', io.stderr), INAPPLICABLE_CUBE_ADVICE);
  runModelsCli(process.argv.slice(2), io)
    .then(async (code) => {
      if (config.warehouse.kind === 'chdb') await drainPending();
      // Cube's core keeps the process alive after shutdown.
      exit(code);
    })
    .catch((err: unknown) => {
      process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
      exit(1);
    });
}
