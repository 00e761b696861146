import { existsSync, readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import path from 'node:path';
import { STATUS_BY_CODE } from './errors';

/**
 * openapi/openapi.json at the project's root, found upwards from here: this
 * file runs from src/http (tests), dist/http (npm start) and build/src/http
 * (npm run bench and fuzz).
 */
export const OPENAPI_FILE = upwards(__dirname, path.join('openapi', 'openapi.json'));

function upwards(from: string, file: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, file))) return path.join(dir, file);
    if (path.dirname(dir) === dir) return path.join(from, file);
  }
}

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ERROR_RESPONSE = /^#\/components\/responses\/Error\d{3}$/;

/**
 * The served contract: openapi/openapi.json with its error responses made
 * from STATUS_BY_CODE. Every operation lists every status the service
 * answers errors with, each narrowed to exactly the codes of that status, so
 * a code added to the table is in the contract without touching the file.
 * The file's own ErrorNNN responses keep their descriptions and headers; a
 * status the file does not know yet gets its HTTP reason phrase.
 */
export function openApiDocument(statusByCode: Record<string, number> = STATUS_BY_CODE): Json {
  const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Json;
  const codesByStatus = new Map<number, string[]>();
  for (const [code, status] of Object.entries(statusByCode)) {
    codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code]);
  }
  const statuses = [...codesByStatus.keys()].sort((a, b) => a - b);

  const responses: Json = doc.components.responses;
  for (const name of Object.keys(responses)) {
    if (/^Error\d{3}$/.test(name) && !codesByStatus.has(Number(name.slice('Error'.length)))) delete responses[name];
  }
  for (const status of statuses) {
    const name = `Error${status}`;
    responses[name] = {
      description: `${STATUS_CODES[status] ?? 'Error'}.`,
      headers: {
        'x-request-id': { $ref: '#/components/headers/RequestId' },
        RateLimit: { $ref: '#/components/headers/OptionalRateLimit' },
        'RateLimit-Policy': { $ref: '#/components/headers/OptionalRateLimitPolicy' },
      },
      ...responses[name],
      content: {
        'application/json': {
          schema: {
            allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', properties: { code: { type: 'string', enum: codesByStatus.get(status) } } }],
          },
        },
      },
    };
  }

  for (const pathItem of Object.values(doc.paths as Json)) {
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (operation === undefined) continue;
      const others = Object.entries(operation.responses as Json).filter(([, r]) => !ERROR_RESPONSE.test(r.$ref ?? ''));
      const errors = statuses.map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }]);
      operation.responses = Object.fromEntries([...others, ...errors]);
    }
  }
  return doc;
}
