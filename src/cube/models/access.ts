/**
 * What a cube promises about its data, said in its own model file, where a
 * data engineer sees it. Cube 0.33 has no cube-level `meta` and rejects
 * unknown keys, so the promise is a comment line Cube ignores:
 *
 *   # access: public      every key reads every row (e.g. chart data)
 *   # access: account     a key reads its own account's rows only
 *
 * (`// access: …` in a JavaScript model.) It covers every cube of the file.
 * `npm run models -- validate` holds each cube to it; a cube without one is
 * held to the account rule only if it reads a table with an account_id column.
 */
export type Access = 'public' | 'account';

const DECLARATION = /^[ \t]*(?:#|\/\/)[ \t]*access:[ \t]*([\w-]+)(?:[ \t].*)?$/gm;

export interface AccessDeclaration {
  access?: Access;
  /** A declaration line with another value, or a second line that disagrees. */
  problem?: string;
}

export function accessDeclaredIn(content: string): AccessDeclaration {
  const values = [...content.matchAll(DECLARATION)].map((m) => m[1]);
  const wrong = values.find((v) => v !== 'public' && v !== 'account');
  if (wrong !== undefined) return { problem: `"access: ${wrong}" is not a declaration: write "access: public" or "access: account"` };
  if (new Set(values).size > 1) return { problem: 'the file declares both "access: public" and "access: account"' };
  return { access: values[0] as Access | undefined };
}
