import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ApiError } from './errors';

/**
 * Requires an `x-api-key` header matching one of the configured keys.
 * Both sides are hashed first, so the comparison takes the same time
 * whatever the key's length or content, and every key is compared.
 */
export function requireApiKey(keys: string[]): RequestHandler {
  const digests = keys.map(sha256);
  return (req, _res, next) => {
    const presented = req.get('x-api-key');
    if (presented === undefined || presented === '') {
      throw new ApiError('unauthorized', 'Missing x-api-key header.');
    }
    const digest = sha256(presented);
    let matched = false;
    for (const candidate of digests) matched = timingSafeEqual(candidate, digest) || matched;
    if (!matched) throw new ApiError('unauthorized', 'Invalid API key.');
    next();
  };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
