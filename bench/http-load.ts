import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * Sends requests over real HTTP with a keep-alive agent and runs a batch of
 * them at a fixed concurrency; latencies are measured in this process, from
 * writing the request to the last byte of the answer.
 */

export interface Answer {
  /** 0 when no HTTP answer came (connection error). */
  status: number;
  ms: number;
  body: string;
  headers?: http.IncomingHttpHeaders;
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  path: string;
  key?: string;
  body?: unknown;
}

export function send(baseUrl: string, agent: http.Agent, { method, path, key, body }: HttpRequest): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: http.OutgoingHttpHeaders = key === undefined ? {} : { 'x-api-key': key };
  if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(`${baseUrl}${path}`, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      // The body is joined when first read: a large answer joined at once would hold this process's event loop, the service's too.
      res.on('end', () => {
        let body: string | undefined;
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - started,
          headers: res.headers,
          get body() {
            body ??= Buffer.concat(chunks).toString('utf8');
            return body;
          },
        });
      });
      res.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, body: err.message }));
    });
    // A failed request is a figure (an error), not a reason to stop the benchmark.
    req.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, body: err.message }));
    req.end(payload);
  });
}

/** One timed operation: ok false counts as an error, with its description. */
export interface Outcome {
  ms: number;
  ok: boolean;
  error?: string;
}

export interface Run {
  latencies: number[];
  errors: number;
  elapsedMs: number;
  firstError?: string;
}

/**
 * Runs `count` operations, `concurrency` at a time, until all are done or
 * `until` says stop; `operation(n)` gets a number unique within the run.
 */
export async function runConcurrently(
  count: number,
  concurrency: number,
  operation: (n: number) => Promise<Outcome>,
  until: () => boolean = () => false,
): Promise<Run> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count && !until()) {
      const outcome = await operation(next++);
      latencies.push(outcome.ms);
      if (!outcome.ok) {
        errors += 1;
        firstError ??= outcome.error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { latencies, errors, elapsedMs: performance.now() - started, firstError };
}

export const describe = (answer: Answer) => `${answer.status === 0 ? 'no answer' : `HTTP ${answer.status}`}: ${answer.body.slice(0, 500)}`;

export const outcomeOf = (answer: Answer): Outcome =>
  answer.status === 200 ? { ms: answer.ms, ok: true } : { ms: answer.ms, ok: false, error: describe(answer) };
