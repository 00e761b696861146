import type { Request, RequestHandler, Response } from 'express';
import type { Authenticator, Principal } from '../keys/authenticator';
import type { Scope } from '../keys/store';
import { ServiceError } from '../errors';

/** Where a route family reads the presented key from. */
export type KeyReader = (req: Request) => string;

/** The documented routes (/v1): `x-api-key` only. */
export const apiKeyHeader: KeyReader = (req) => req.get('x-api-key') ?? '';

/**
 * Cube's own API (/cubejs-api/v1): Cube's clients send their token in
 * `Authorization`, raw or as `Bearer <token>`; `x-api-key` wins when both
 * are there.
 */
export const apiKeyOrAuthorization: KeyReader = (req) => {
  const apiKey = req.get('x-api-key');
  if (apiKey !== undefined) return apiKey;
  const authorization = (req.get('authorization') ?? '').trim();
  // The scheme is case-insensitive (RFC 9110 §11.1).
  const bearer = /^bearer\s+(.*)$/i.exec(authorization);
  return bearer ? bearer[1] : authorization;
};

/**
 * Keeps the principal (key id, account, scopes) of a presented key the
 * authenticator accepts for the rest of the request. Refusing is left to
 * requireApiKey, so that the limit on requests without a valid key can sit
 * between the two.
 */
export function identifyApiKey(
  authenticator: Authenticator,
  readKey: KeyReader,
  onFailure: (reason: 'missing' | 'invalid') => void = () => {},
): RequestHandler {
  return (req, res, next) => {
    const presented = readKey(req);
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
  if (!hasPrincipal(res)) throw new ServiceError('unauthorized', 'Missing or invalid API key.');
  next();
};

export function hasPrincipal(res: Response): boolean {
  return res.locals.principal !== undefined;
}

export function requireScope(scope: Scope): RequestHandler {
  return (_req, res, next) => {
    if (!principalOf(res).scopes.includes(scope)) {
      throw new ServiceError('forbidden', `This API key lacks the ${scope} scope.`);
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
