/**
 * What is wrong with a set of model files, in the form a data engineer acts
 * on: the file, the cube and member when known, and one sentence.
 * `npm run models -- validate`, hot reload and start-up print the same lines.
 */
export interface ModelProblem {
  /** Path of the model file, relative to the models directory ('' when no file is to blame). */
  file: string;
  cube?: string;
  member?: string;
  message: string;
  /**
   * 'warning': the models serve anyway (advice such as a missing
   * description, or a member left out); absent: the models are refused.
   * `npm run models -- validate --strict` refuses warnings too.
   */
  severity?: 'warning';
  /** Why the member cannot be queried (its SQL cannot be generated or run): queries naming it are refused with this. */
  unavailable?: string;
}

export const isWarning = (problem: ModelProblem) => problem.severity === 'warning';

export function formatProblem({ file, cube, member, message }: ModelProblem): string {
  const where = [file || '(models)', cube && (member ? `${cube}.${member}` : cube)].filter(Boolean).join(': ');
  return `${where}: ${message}`;
}

export function formatProblems(problems: readonly ModelProblem[]): string {
  return problems.map((p) => `  ${formatProblem(p)}`).join('\n');
}

export class ModelsInvalid extends Error {
  constructor(
    readonly dir: string,
    readonly problems: ModelProblem[],
    /** Found beside the problems; not why the models are refused. */
    readonly warnings: ModelProblem[] = [],
  ) {
    super(`The models in ${dir} have ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${formatProblems(problems)}`);
    this.name = 'ModelsInvalid';
  }
}
