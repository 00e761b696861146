import type { RequestHandler, Response } from 'express';
import type { Authenticator, Principal } from '../keys/authenticator';
import type { Scope } from '../keys/store';
import { ApiError } from './errors';

/**
 * Keeps the principal (key id, account, scopes) of an `x-api-key` header the
 * authenticator accepts for the rest of the request. Refusing is left to
 * requireApiKey, so that the limit on requests without a valid key can sit
 * between the two.
 */
export function identifyApiKey(authenticator: Authenticator, onFailure: (reason: 'missing' | 'invalid') => void = () => {}): RequestHandler {
  return (req, res, next) => {
    const presented = req.get('x-api-key') ?? '';
    res.locals.principal = authenticator.authenticate(presented);
    if (res.locals.principal === undefined) onFailure(presented === '' ? 'missing' : 'invalid');
    next();
  };
}

/**
 * Refuses a request identifyApiKey found no valid key on. A missing, unknown,
 * revoked or expired key all get the same answer, so the answer says nothing
 * about which keys exist.
 */
export const requireApiKey: RequestHandler = (_req, res, next) => {
  if (!hasPrincipal(res)) throw new ApiError('unauthorized', 'Missing or invalid API key.');
  next();
};

export function hasPrincipal(res: Response): boolean {
  return res.locals.principal !== undefined;
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
