/**
 * Cube's own REST answers (/cubejs-api/v1), as Cube builds them, less the
 * models' `description`s: those are written for data engineers and never
 * reach the API, on Cube's routes as on the documented ones. Everything else
 * (member `meta`, `public`, `dbType`, …) is Cube's and stays, so Cube's
 * clients read what they expect.
 */

type Loose = Record<string, any>;

const MEMBER_LISTS = ['measures', 'dimensions', 'segments'] as const;
const ANNOTATION_KINDS = ['measures', 'dimensions', 'segments', 'timeDimensions'] as const;

export function cubeMetaWithoutDescriptions(body: Loose): { cubes: Loose[] } {
  const cubes: Loose[] = body.cubes ?? [];
  return {
    cubes: cubes.map((cube) => {
      const copy = withoutDescription(cube);
      for (const list of MEMBER_LISTS) {
        if (Array.isArray(cube[list])) copy[list] = cube[list].map(withoutDescription);
      }
      return copy;
    }),
  };
}

/** A load answer: one result, or Cube's multi shape with `results`. */
export function cubeLoadWithoutDescriptions(body: Loose): Loose {
  if (Array.isArray(body.results)) return { ...body, results: body.results.map(resultWithoutDescriptions) };
  return resultWithoutDescriptions(body);
}

function resultWithoutDescriptions(result: Loose): Loose {
  const annotation: Loose | undefined = result.annotation;
  if (annotation === undefined || annotation === null) return result;
  const stripped: Loose = { ...annotation };
  for (const kind of ANNOTATION_KINDS) {
    const members: Loose | undefined = annotation[kind];
    if (members) stripped[kind] = Object.fromEntries(Object.entries(members).map(([name, a]) => [name, withoutDescription(a)]));
  }
  return { ...result, annotation: stripped };
}

function withoutDescription(item: Loose): Loose {
  const { description: _description, ...rest } = item;
  return rest;
}
