import type { Request, RequestHandler, Response } from 'express';
import type { LoadAnswer } from '../../cube/answer';
import type { CubeService, RequestScope } from '../../cube/service';
import type { Admission, Admitted } from '../../query/admission';
import { requestScopeOf } from '../scope';
import { sendLoadAnswer } from '../truncation-header';

export interface QueryRouteDeps {
  admission: Admission;
  cube: CubeService;
  /** QUERY_TIMEOUT_SECONDS: a load's deadline from its arrival at the route. */
  timeoutMs: number;
}

/**
 * /v1/data/load/ — runs a query (spec 4.2). POST carries `{ query, queryType? }`
 * as JSON; GET carries the same as URL parameters (`query` as JSON text), as
 * Cube's JavaScript client sends it. Without `queryType` the answer is the
 * documented single result; with `queryType: "multi"` it is Cube's multi
 * shape (`queryType`, `results`, `pivotQuery`), which compareDateRange and
 * arrays of queries need. The query reads the key's account only.
 */
export function loadRoute(deps: QueryRouteDeps): RequestHandler {
  return (req, res) =>
    answerLoad(req, res, deps, 'load', (admitted, context) =>
      admitted.multi ? deps.cube.loadMulti(admitted.query, context) : deps.cube.load(admitted.query, context),
    );
}

/**
 * A load on either API: admitted by its route's rules, run through Cube,
 * timed in the query metrics from admission's model stage to Cube's answer,
 * and sent with Result-Truncated.
 */
export async function answerLoad<R extends 'load' | 'cubejs-load'>(
  req: Request,
  res: Response,
  { admission, cube, timeoutMs }: QueryRouteDeps,
  route: R,
  run: (admitted: Admitted[R], context: RequestScope) => Promise<LoadAnswer>,
): Promise<void> {
  const scope = requestScopeOf(res, { ms: timeoutMs, what: 'query' });
  const timer = cube.queryTimer();
  let answer: LoadAnswer;
  try {
    answer = await run(await admission.admit(route, req, timer.start), scope);
    timer.answered();
  } catch (err) {
    timer.failed(err);
    throw err;
  }
  await sendLoadAnswer(res, answer);
}
