import { randomBytes } from 'node:crypto';
import { CubeFailure } from '../errors';
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
  /** Of those tables, the ones with an account_id column: their rows belong to accounts. */
  accountOwned(tables: string[]): Promise<Set<string>>;
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
    throw new CubeFailure('warehouse_unavailable', 'The database cannot be reached to check the models; try again shortly.', firstLine(err));
  }

  const problems: ModelProblem[] = [...duplicates];
  for (const file of snapshot.files) {
    const { problem } = accessDeclaredIn(file.content);
    if (problem) problems.push({ file: file.fileName, message: problem });
  }
  const { cubeEvaluator } = compiled;
  for (const name of cubeEvaluator.cubeNames()) {
    const cube = cubeEvaluator.cubeFromPath(name);
    for (const [member, measure] of Object.entries(cube.measures ?? {})) {
      if (!measure.description?.trim()) {
        problems.push({ file: cube.fileName, cube: name, member, message: 'the measure has no description: say what it counts' });
      }
    }
    const content = snapshot.files.find((f) => f.fileName === cube.fileName)?.content ?? '';
    problems.push(...(await checkData(snapshot, engine, name, cube, accessDeclaredIn(content).access)));
  }
  return problems;
}

/**
 * Runs the cube's SQL past ClickHouse's analyzer (every member, so a
 * reference to a missing column is found) and holds the cube to its access
 * promise: a cube that reads a table with an account_id column, or declares
 * "access: account", must put the account of the query's security context
 * into its SQL, which shows as a parameter of the statement Cube generates.
 */
async function checkData(snapshot: ModelSnapshot, engine: ModelEngine, name: string, cube: CubeDefinition, access: Access | undefined): Promise<ModelProblem[]> {
  const at = { file: cube.fileName, cube: name };
  const measures = Object.keys(cube.measures ?? {}).map((m) => `${name}.${m}`);
  const dimensions = Object.keys(cube.dimensions ?? {}).map((d) => `${name}.${d}`);
  if (measures.length + dimensions.length === 0) return [{ ...at, message: 'the cube has no measures or dimensions' }];

  const probe = `models-probe-${randomBytes(6).toString('hex')}`;
  let generated: GeneratedSql;
  try {
    generated = await engine.sql(snapshot, { measures, dimensions }, probe);
  } catch (err) {
    return [{ ...at, message: `Cube cannot generate SQL for the cube: ${firstLine(err)}` }];
  }
  let tables: string[];
  try {
    tables = await engine.tablesRead(generated);
  } catch (err) {
    return memberProblems(snapshot, engine, at, { measures, dimensions }, err);
  }

  const owned = [...(await engine.accountOwned(tables))];
  const restricted = generated.params.some((p) => p === probe);
  if (restricted || access === 'public') return [];
  if (access === 'account') {
    return [{ ...at, message: `declared "access: account" but its SQL does not restrict by account: select through {SECURITY_CONTEXT.accountId.filter('account_id')}` }];
  }
  if (owned.length > 0) {
    return [
      {
        ...at,
        message:
          `reads ${owned.join(', ')}, whose rows belong to accounts (account_id column), but its SQL does not restrict by account: ` +
          `select through {SECURITY_CONTEXT.accountId.filter('account_id')}, or declare "# access: public" in the file if every key may read every row`,
      },
    ];
  }
  return [];
}

/** ClickHouse rejected the cube's SQL: find the members whose own SQL it rejects. */
async function memberProblems(
  snapshot: ModelSnapshot,
  engine: ModelEngine,
  at: { file: string; cube: string },
  members: { measures: string[]; dimensions: string[] },
  cubeError: unknown,
): Promise<ModelProblem[]> {
  const queries = [...members.measures.map((m) => ({ member: m, query: { measures: [m] } })), ...members.dimensions.map((d) => ({ member: d, query: { dimensions: [d] } }))];
  const problems: ModelProblem[] = [];
  for (const { member, query } of queries) {
    try {
      await engine.tablesRead(await engine.sql(snapshot, query, null));
    } catch (err) {
      problems.push({ ...at, member: member.slice(at.cube.length + 1), message: `ClickHouse rejects the member's SQL: ${clickhouseMessage(err)}` });
    }
  }
  return problems.length > 0 ? problems : [{ ...at, message: `ClickHouse rejects the cube's SQL: ${clickhouseMessage(cubeError)}` }];
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
