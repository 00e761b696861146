import type { Engine, GatewayMethod, GatewayReply } from './engine/core';
import { classifyGatewayError, type GatewayError } from './engine/errors';
import type { InFlight } from './in-flight';
import type { Models } from './models/models';
import type { RequestScope } from './types';

/**
 * Cube's API gateway as the service asks it: under the request's scope (its
 * account as Cube's security context, Cube's time added to its timing), by
 * the models serving when the request arrives, whatever reloads meanwhile,
 * with Cube's errors classified.
 */
export interface Gateway {
  /** The reply's body of one of the gateway's methods, or Cube's error classified and thrown. */
  body(method: GatewayMethod, args: Record<string, unknown>, scope: RequestScope, modelVersion?: string): Promise<any>;
  /**
   * A load's body. Cube answers "Continue wait" while a query is still
   * running; the query keeps running in Cube's queue, so asking again picks
   * it up. Clients never see "Continue wait": the load is asked again until
   * it is answered or its ticket aborts (its request's deadline, shutdown).
   * Loads wait for the start's catch-up, within their deadline.
   */
  load(args: Record<string, unknown>, scope: RequestScope): Promise<any>;
}

export function createGateway(engine: Engine, models: Models, inFlight: InFlight, caughtUp: Promise<void>): Gateway {
  const ask = async (method: GatewayMethod, args: Record<string, unknown>, scope: RequestScope, modelVersion?: string): Promise<GatewayReply> => {
    const version = modelVersion ?? (await models.version());
    const started = performance.now();
    try {
      return await engine.call(method, args, { securityContext: securityContextOf(scope), requestId: scope.requestId, modelVersion: version });
    } finally {
      if (scope.timing) scope.timing.cubeMs += performance.now() - started;
    }
  };

  const askUntilAnswered = async (args: Record<string, unknown>, scope: RequestScope, signal: AbortSignal): Promise<any> => {
    for (;;) {
      // The answer went out already; stop asking Cube for it.
      if (signal.aborted) throw signal.reason;
      const reply = await ask('load', args, scope);
      if (reply.status === 200 && reply.body?.error === 'Continue wait') continue;
      return bodyOf(reply);
    }
  };

  return {
    body: async (method, args, scope, modelVersion) => bodyOf(await ask(method, args, scope, modelVersion)),
    load: async (args, scope) => {
      const load = inFlight.open(scope);
      try {
        return await Promise.race([caughtUp.then(() => askUntilAnswered(args, scope, load.signal)), load.aborted]);
      } finally {
        load.end();
      }
    },
  };
}

function bodyOf(reply: GatewayReply): any {
  if (reply.status === 200 && !reply.body?.error) return reply.body;
  throw classifyGatewayError(reply.status, reply.body as GatewayError);
}

/** The scope's account as Cube's security context: none for an operator, who reads every account. */
export function securityContextOf({ accountId }: RequestScope): { accountId?: string } {
  if (accountId === null) return {};
  // An empty id would make the models' filter a no-op, i.e. every account.
  if (accountId === '') throw new Error('refusing a query with an empty account id');
  return { accountId };
}
