import { modelMembersOf, type ModelMembers } from '../query/members';
import type { Models } from './models/models';
import type { Schema } from './shapes';

export interface ServingMembers {
  /** The serving models' members, which admission's model stage checks queries by. */
  members(): Promise<ModelMembers>;
  /** The serving models' cubes as last read, the only values the query metrics' cube label takes. */
  cubeNames(): ReadonlySet<string>;
}

/**
 * The members of the serving models, read once per model version (a reload
 * brings new ones): /meta's members (`meta`), the members the models'
 * checks found cannot be queried, and the cubes whose rows have a key.
 */
export function servingMembers(
  models: Pick<Models, 'version' | 'unavailable'>,
  meta: (version: string) => Promise<Schema[]>,
  keyedCubes: (version: string) => Promise<ReadonlySet<string>>,
): ServingMembers {
  let read: { version: string; members: Promise<ModelMembers> } | undefined;
  let cubeNames: ReadonlySet<string> = new Set();
  return {
    members: async () => {
      const version = await models.version();
      if (read?.version !== version) {
        const members = Promise.all([meta(version), keyedCubes(version)]).then(([schemas, keyed]) => {
          cubeNames = new Set(schemas.map((schema) => schema.name));
          return { ...modelMembersOf(schemas), unavailable: models.unavailable(version), keyed };
        });
        read = { version, members };
        members.catch(() => {
          if (read?.members === members) read = undefined;
        });
      }
      return read.members;
    },
    cubeNames: () => cubeNames,
  };
}
