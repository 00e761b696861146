import { randomBytes } from 'node:crypto';
import { ServiceError } from '../../errors';
import { accessDeclaredIn, type Access } from './access';
import { problemOf, yamlProblems } from './compile-errors';
import { duplicateProblems } from './duplicates';
import type { ModelProblem } from './problems';
import type { ModelSnapshot } from './snapshot';

/**
 * What validation needs from the engine, all of it the service's own path:
 * Cube's compiler API of the serving core, its API gateway's SQL generation,
 * and the warehouse the service reads.
 */
export interface ModelEngine {
  /** The snapshot compiled by the serving core (a CompileError when it does not compile). */
  compile(snapshot: ModelSnapshot): Promise<CompiledModels>;
  /** Every error Cube's compiler reports for a snapshot that does not compile. */
  compileErrors(snapshot: ModelSnapshot): Promise<unknown[]>;
  /** The SQL and parameters Cube generates for a query, as the gateway's /sql does. */
  sql(snapshot: ModelSnapshot, query: Record<string, unknown>, accountId: string | null): Promise<GeneratedSql>;
  /** Tables (database.table) a statement reads, as ClickHouse's analyzer resolves them. */
  tablesRead(sql: GeneratedSql): Promise<string[]>;
  /** The tables (database.table) with an account_id column: their rows belong to accounts. */
  accountTables(): Promise<Set<string>>;
}

export interface GeneratedSql {
  sql: string;
  params: unknown[];
}

/** The parts of Cube's compiled models that validation reads. */
export interface CompiledModels {
  cubeEvaluator: {
    cubeNames(): string[];
    cubeFromPath(name: string): CubeDefinition;
  };
}

interface CubeDefinition {
  fileName: string;
  isView?: boolean;
  measures?: Record<string, { description?: string }>;
  dimensions?: Record<string, { type?: string }>;
}

export async function validateSnapshot(snapshot: ModelSnapshot, engine: ModelEngine): Promise<ModelProblem[]> {
  const unreadable = yamlProblems(snapshot);
  if (unreadable.length > 0) return unreadable;
  const duplicates = duplicateProblems(snapshot);

  let compiled: CompiledModels;
  try {
    compiled = await engine.compile(snapshot);
  } catch (err) {
    // Cube's package does not export the class; a YAML or file-system error is thrown as is.
    const errors = (err as Error)?.constructor?.name === 'CompileError' ? await engine.compileErrors(snapshot) : [err];
    return [...duplicates, ...dedupe(errors.map((e) => problemOf(snapshot, e)))];
  }

  // A warehouse that cannot be reached is not a problem of the models: say
  // so once, not once per member, as the failure the service answers 503.
  try {
    await engine.tablesRead({ sql: 'SELECT 1', params: [] });
  } catch (err) {
    throw new ServiceError('warehouse_unavailable', 'The database cannot be reached to check the models; try again shortly.', firstLine(err));
  }

  const problems: ModelProblem[] = [...duplicates];
  for (const file of snapshot.files) {
    const { problem } = accessDeclaredIn(file.content);
    if (problem) problems.push({ file: file.fileName, message: problem });
  }
  const { cubeEvaluator } = compiled;
  // Read once for the whole snapshot: one statement, not one a cube.
  let accountTables: Promise<Set<string>> | undefined;
  const owned = () => (accountTables ??= engine.accountTables());
  for (const name of cubeEvaluator.cubeNames()) {
    const cube = cubeEvaluator.cubeFromPath(name);
    for (const [member, measure] of Object.entries(cube.measures ?? {})) {
      if (!measure.description?.trim()) {
        problems.push({ file: cube.fileName, cube: name, member, severity: 'warning', message: 'the measure has no description: say what it counts' });
      }
    }
    const content = snapshot.files.find((f) => f.fileName === cube.fileName)?.content ?? '';
    problems.push(...(await checkData(snapshot, engine, owned, name, cube, accessDeclaredIn(content).access)));
  }
  return problems;
}

/**
 * Runs the cube's SQL past ClickHouse's analyzer (every member, so a
 * reference to a missing column is found) and holds the cube to its access
 * promise: a cube that reads a table with an account_id column, or declares
 * "access: account", must put the account of the query's security context
 * into its SQL, which shows as a parameter of the statement Cube generates.
 *
 * A member whose SQL Cube cannot generate (a measure type the dialect lacks)
 * or ClickHouse cannot run (a column that is not there) is left out, not
 * its cube: the cube's other members are checked and serve, and queries
 * naming that member are refused with the reason.
 */
async function checkData(
  snapshot: ModelSnapshot,
  engine: ModelEngine,
  accountTables: () => Promise<Set<string>>,
  name: string,
  cube: CubeDefinition,
  access: Access | undefined,
): Promise<ModelProblem[]> {
  const at = { file: cube.fileName, cube: name };
  const all = {
    measures: Object.keys(cube.measures ?? {}).map((m) => `${name}.${m}`),
    dimensions: Object.keys(cube.dimensions ?? {}).map((d) => `${name}.${d}`),
  };
  if (all.measures.length + all.dimensions.length === 0) return [{ ...at, message: 'the cube has no measures or dimensions' }];

  const probe = `models-probe-${randomBytes(6).toString('hex')}`;
  let unavailable: ModelProblem[] = [];
  let result = await run(snapshot, engine, all, probe);
  if ('error' in result) {
    unavailable = await unavailableMembers(snapshot, engine, at, all);
    const out = new Set(unavailable.map((p) => `${name}.${p.member}`));
    const members = { measures: all.measures.filter((m) => !out.has(m)), dimensions: all.dimensions.filter((d) => !out.has(d)) };
    // None runs alone (the cube's own SQL, say), or each does but not all
    // together: a problem of the cube, not of its members.
    if (members.measures.length + members.dimensions.length === 0) return [{ ...at, message: failureOf(result.error, 'the cube') }];
    if (unavailable.length > 0) result = await run(snapshot, engine, members, probe);
    if ('error' in result) return [...unavailable, { ...at, message: failureOf(result.error, 'the cube') }];
  }

  const { generated, tables } = result;
  const ownedTables = await accountTables();
  const owned = tables.filter((t) => ownedTables.has(t));
  const restricted = generated.params.some((p) => p === probe);
  if (restricted || access === 'public') return unavailable;
  if (access === 'account') {
    return [
      ...unavailable,
      {
        ...at,
        message: `declared "access: account" but its SQL does not restrict by account: select through {SECURITY_CONTEXT.accountId.filter('account_id')}`,
      },
    ];
  }
  if (owned.length > 0) {
    return [
      ...unavailable,
      {
        ...at,
        message:
          `reads ${owned.join(', ')}, whose rows belong to accounts (account_id column), but its SQL does not restrict by account: ` +
          `select through {SECURITY_CONTEXT.accountId.filter('account_id')}, or declare "# access: public" in the file if every key may read every row`,
      },
    ];
  }
  return unavailable;
}

/** The members' SQL for the account and the tables it reads, or why Cube cannot generate it or ClickHouse cannot run it. */
async function run(
  snapshot: ModelSnapshot,
  engine: ModelEngine,
  query: { measures?: string[]; dimensions?: string[] },
  accountId: string | null,
): Promise<{ generated: GeneratedSql; tables: string[] } | { error: unknown }> {
  let generated: GeneratedSql;
  try {
    generated = await engine.sql(snapshot, query, accountId);
  } catch (err) {
    return { error: new CannotGenerate(err) };
  }
  try {
    return { generated, tables: await engine.tablesRead(generated) };
  } catch (err) {
    return { error: err };
  }
}

class CannotGenerate {
  constructor(readonly cause: unknown) {}
}

const failureOf = (err: unknown, what: 'the cube' | 'the member') =>
  err instanceof CannotGenerate
    ? `Cube cannot generate SQL for ${what}: ${firstLine(err.cause)}`
    : `ClickHouse rejects ${what}'s SQL: ${clickhouseMessage(err)}`;

/** Each member of the cube that does not run alone. */
async function unavailableMembers(
  snapshot: ModelSnapshot,
  engine: ModelEngine,
  at: { file: string; cube: string },
  members: { measures: string[]; dimensions: string[] },
): Promise<ModelProblem[]> {
  const queries = [
    ...members.measures.map((m) => ({ member: m, query: { measures: [m] } })),
    ...members.dimensions.map((d) => ({ member: d, query: { dimensions: [d] } })),
  ];
  const problems: ModelProblem[] = [];
  for (const { member, query } of queries) {
    const result = await run(snapshot, engine, query, null);
    if (!('error' in result)) continue;
    const reason = failureOf(result.error, 'the member');
    problems.push({
      ...at,
      member: member.slice(at.cube.length + 1),
      severity: 'warning',
      unavailable: reason,
      message: `the member cannot be queried, so queries naming it are refused: ${reason}`,
    });
  }
  return problems;
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0].trim();

/** ClickHouse's message without the statement it quotes and the query id, which name Cube's SQL, not the model. */
const clickhouseMessage = (err: unknown) =>
  firstLine(err)
    .replace(/^Query failed: (?:Error: )?/, '')
    .replace(/\s*In scope .*?(?=Maybe you meant|$)/, ' ')
    .replace(/[;\s]*query id: \S+\s*$/, '')
    .trim();

function dedupe(problems: ModelProblem[]): ModelProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = JSON.stringify(p);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
