import type { RequestHandler, Response } from 'express';
import type { Authenticator, Principal } from '../keys/authenticator';
import type { Scope } from '../keys/store';
import { ApiError } from './errors';

/**
 * Requires an `x-api-key` header that the authenticator accepts, and keeps
 * the key's principal (key id, account, scopes) for the rest of the request.
 * A missing, unknown, revoked or expired key all get the same answer, so the
 * answer says nothing about which keys exist.
 */
export function requireApiKey(authenticator: Authenticator): RequestHandler {
  return (req, res, next) => {
    const principal = authenticator.authenticate(req.get('x-api-key') ?? '');
    if (principal === undefined) throw new ApiError('unauthorized', 'Missing or invalid API key.');
    res.locals.principal = principal;
    next();
  };
}

export function requireScope(scope: Scope): RequestHandler {
  return (_req, res, next) => {
    if (!principalOf(res).scopes.includes(scope)) {
      throw new ApiError('forbidden', `This API key lacks the ${scope} scope.`);
    }
    next();
  };
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  // Routes sit behind requireApiKey; reaching one without a principal is our bug.
  if (principal === undefined) throw new Error('no principal: route mounted outside requireApiKey');
  return principal;
}
