import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as fc from 'fast-check';
import { abuseRequest, LOAD_PATH, type AbuseRequest } from './cases';

/**
 * Sends generated hostile requests to a listening service over real HTTP and
 * judges every answer: never a 5xx, every 4xx/5xx the `{ error, code,
 * requestId }` envelope, never a stack trace, SQL or internal path, never a
 * dropped connection. Between cases it checks that a valid query still works.
 * It also times the event loop of its own process, which must be the one
 * serving the requests (the fuzzer and the tests run the service in
 * process): a case that held the loop longer than `maxBlockMs` blocked every
 * other request of the service, and fails the run.
 *
 * node's http module rather than fetch: it sends invalid UTF-8 bytes, Latin-1
 * header values and odd request targets as they are.
 */

export interface AbuseOptions {
  baseUrl: string;
  apiKey: string;
  numRuns: number;
  seed: number;
  /** A valid query is checked before the first case, after every `checkEvery` cases and after the last. */
  checkEvery?: number;
  /** Per request; a request without an answer by then counts as a request error. */
  timeoutMs?: number;
  /** Failing cases kept in the summary, with their request and response excerpts. */
  maxSamples?: number;
  onCase?: (outcome: CaseOutcome, summary: AbuseSummary) => void;
  /** The requests to send; every kind of hostile request by default. */
  requests?: fc.Arbitrary<AbuseRequest>;
  /** Longest event-loop delay one case may cause. */
  maxBlockMs?: number;
}

export type Problem = 'server_error' | 'leak' | 'non_envelope' | 'request_error' | 'valid_query_failed' | 'event_loop_blocked';

export interface CaseOutcome {
  /** 0-based position in the run; with the seed, enough to regenerate the request. */
  index: number;
  request: AbuseRequest;
  status?: number;
  body: string;
  problems: Problem[];
  detail?: string;
  /** Event-loop delay while the case was in flight, when it was the worst so far. */
  delayMs?: number;
}

export interface FailureSample {
  index: number;
  problems: Problem[];
  detail?: string;
  delayMs?: number;
  request: { method: string; path: string; headers: Record<string, string>; bodyBytes: number; body: string; chunked: boolean };
  response: { status?: number; body: string };
}

export interface AbuseSummary {
  seed: number;
  cases: number;
  byStatus: Record<string, number>;
  serverErrors: number;
  leaks: number;
  nonEnvelope: number;
  requestErrors: number;
  validChecks: { passed: number; failed: number };
  /** Cases that held the event loop longer than maxBlockMs and than any case before them. */
  blocked: number;
  /** Longest event-loop delay one case caused, and that case's index. */
  worstDelay: { ms: number; index: number };
  samples: FailureSample[];
  elapsedMs: number;
}

/** Patterns that mean the service told a client about its internals. */
const LEAKS: [string, RegExp][] = [
  ['stack frame', /\n\s+at .+[(:]/],
  ['node_modules path', /node_modules/],
  ['source location', /\.(?:ts|js|cjs|mjs):\d+/],
  ['SQL text', /\bSELECT\s/],
  ['ClickHouse error code', /\bCode: \d+/],
  ['ClickHouse exception', /DB::Exception/],
  ['stack', /\bstack\b/i],
  ['working directory', new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))],
];

const EXCERPT_CHARS = 600;

export async function runAbuse(options: AbuseOptions): Promise<AbuseSummary> {
  const { baseUrl, apiKey, numRuns, seed, checkEvery = 100, timeoutMs = 30_000, maxSamples = 10, onCase, maxBlockMs = 1000 } = options;
  const target = new URL(baseUrl);
  const started = Date.now();
  const summary: AbuseSummary = {
    seed,
    cases: 0,
    byStatus: {},
    serverErrors: 0,
    leaks: 0,
    nonEnvelope: 0,
    requestErrors: 0,
    validChecks: { passed: 0, failed: 0 },
    blocked: 0,
    worstDelay: { ms: 0, index: -1 },
    samples: [],
    elapsedMs: 0,
  };
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const keep = (outcome: CaseOutcome) => {
    if (outcome.problems.length > 0 && summary.samples.length < maxSamples) summary.samples.push(sample(outcome));
  };

  const checkValidQuery = async (index: number) => {
    const outcome = await validQueryCheck(target, apiKey, timeoutMs, index);
    if (outcome.problems.length === 0) summary.validChecks.passed += 1;
    else summary.validChecks.failed += 1;
    keep(outcome);
  };

  // The first query also has Cube compile the models, once per process; only the cases are timed.
  await checkValidQuery(-1);
  delay.enable();
  // The histogram drops its first sample: let it take one before the first case.
  await new Promise((resolve) => setTimeout(resolve, 20));
  // fast-check only generates here: a bad answer is counted, never thrown, so one seed always gives one sequence of requests.
  await fc.assert(
    fc.asyncProperty(options.requests ?? abuseRequest(apiKey), async (request) => {
      const index = summary.cases;
      // Never reset: a reset drops the next sample, which would hide a block
      // starting right after it. So a case is timed when it raises the worst
      // delay so far; the worst and the failure are exact, smaller ones unseen.
      const before = delay.max;
      const exchange = await send(target, request, timeoutMs);
      // One turn of the loop, so a delay that ended with the answer is recorded.
      await new Promise((resolve) => setImmediate(resolve));
      const outcome = judge(index, request, exchange);
      const delayMs = Math.round(delay.max / 1e6);
      if (delay.max > before) {
        outcome.delayMs = delayMs;
        summary.worstDelay = { ms: delayMs, index };
      }
      if (delay.max > before && delayMs > maxBlockMs) {
        outcome.problems.push('event_loop_blocked');
        outcome.detail = [outcome.detail, `held the event loop for ${delayMs} ms`].filter(Boolean).join('; ');
        summary.blocked += 1;
      }
      summary.cases += 1;
      const status = outcome.status === undefined ? 'no answer' : String(outcome.status);
      summary.byStatus[status] = (summary.byStatus[status] ?? 0) + 1;
      if (outcome.problems.includes('server_error')) summary.serverErrors += 1;
      if (outcome.problems.includes('leak')) summary.leaks += 1;
      if (outcome.problems.includes('non_envelope')) summary.nonEnvelope += 1;
      if (outcome.problems.includes('request_error')) summary.requestErrors += 1;
      keep(outcome);
      summary.elapsedMs = Date.now() - started;
      onCase?.(outcome, summary);
      if (summary.cases % checkEvery === 0 && summary.cases < numRuns) await checkValidQuery(index);
    }),
    // A throw here is a harness bug: stop rather than shrink by sending more requests.
    { seed, numRuns, endOnFailure: true },
  );
  delay.disable();
  await checkValidQuery(summary.cases);
  summary.elapsedMs = Date.now() - started;
  return summary;
}

/** True when the run found nothing wrong. */
export function clean(summary: AbuseSummary): boolean {
  return summary.serverErrors + summary.leaks + summary.nonEnvelope + summary.requestErrors + summary.blocked + summary.validChecks.failed === 0;
}

export interface Exchange {
  status?: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  error?: string;
}

/** One request on a fresh connection; never rejects: a failed exchange carries `error`. */
export function send(target: URL, request: AbuseRequest, timeoutMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const headers: Record<string, string> = { ...request.headers };
    if (body !== undefined && !request.chunked) headers['content-length'] = String(body.length);
    let settled = false;
    const finish = (exchange: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(exchange);
    };
    // A fresh connection each time, so one broken exchange cannot spill into the next.
    const req = http.request({ host: target.hostname, port: target.port, method: request.method, path: request.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => finish({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => finish({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), error: err.message }));
    });
    const timer = setTimeout(() => {
      finish({ headers: {}, body: '', error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (err) => finish({ headers: {}, body: '', error: err.message }));
    if (body !== undefined && request.chunked) {
      // Several writes, split mid-character on purpose, so the server reassembles UTF-8 across chunks.
      const step = Math.max(1, Math.ceil(body.length / 3));
      for (let at = 0; at < body.length; at += step) req.write(body.subarray(at, at + step));
      req.end();
    } else {
      req.end(body);
    }
  });
}

function judge(index: number, request: AbuseRequest, exchange: Exchange): CaseOutcome {
  const outcome: CaseOutcome = { index, request, status: exchange.status, body: exchange.body, problems: [] };
  const details: string[] = [];
  if (exchange.error !== undefined || exchange.status === undefined) {
    outcome.problems.push('request_error');
    details.push(exchange.error ?? 'no status');
    outcome.detail = details.join('; ');
    return outcome;
  }
  if (exchange.status >= 500) outcome.problems.push('server_error');

  let parsed: unknown;
  try {
    parsed = exchange.body === '' ? undefined : JSON.parse(exchange.body);
  } catch {
    parsed = undefined;
  }
  // HEAD answers carry headers only.
  if (exchange.status >= 400 && request.method.toUpperCase() !== 'HEAD') {
    const problem = envelopeProblem(parsed, exchange.headers);
    if (problem) {
      outcome.problems.push('non_envelope');
      details.push(problem);
    }
  }

  // Row values are the model's data (a podcast called "Future Stack"), not something the service let slip.
  const said = exchange.status < 400 && parsed !== undefined ? strings(withoutRows(parsed)).join('\n') : [exchange.body, ...strings(parsed)].join('\n');
  const asked = requestText(request);
  for (const [name, pattern] of LEAKS) {
    // A pattern the request itself carried is an echo of the client's own input (a rejected member name, say), not a leak.
    if (pattern.test(said) && !pattern.test(asked)) {
      if (!outcome.problems.includes('leak')) outcome.problems.push('leak');
      details.push(`leaks ${name}`);
    }
  }
  if (details.length > 0) outcome.detail = details.join('; ');
  return outcome;
}

function envelopeProblem(parsed: unknown, headers: http.IncomingHttpHeaders): string | undefined {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'body is not a JSON object';
  const { error, code, requestId } = parsed as Record<string, unknown>;
  if (typeof error !== 'string' || error === '') return 'no "error" string';
  if (typeof code !== 'string' || code === '') return 'no "code" string';
  if (typeof requestId !== 'string' || requestId === '') return 'no "requestId" string';
  if (headers['x-request-id'] !== requestId) return 'requestId differs from the x-request-id header';
  return undefined;
}

async function validQueryCheck(target: URL, apiKey: string, timeoutMs: number, index: number): Promise<CaseOutcome> {
  const request: AbuseRequest = {
    method: 'POST',
    path: LOAD_PATH,
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ query: { measures: ['Downloads.count'] } }),
  };
  const exchange = await send(target, request, timeoutMs);
  const outcome: CaseOutcome = { index, request, status: exchange.status, body: exchange.body, problems: [] };
  let data: unknown;
  try {
    data = (JSON.parse(exchange.body) as { data?: unknown }).data;
  } catch {
    data = undefined;
  }
  if (exchange.status !== 200 || !Array.isArray(data) || data.length === 0) {
    outcome.problems.push('valid_query_failed');
    outcome.detail = `valid query after case ${index}: ${exchange.error ?? `status ${exchange.status}`}`;
  }
  return outcome;
}

/** Everything the request said, raw and decoded, to tell echoes from leaks. */
function requestText(request: AbuseRequest): string {
  const parts = [request.path, safeDecode(request.path), ...Object.values(request.headers)];
  if (request.body !== undefined) {
    // Every decoding the server may apply, as the Content-Type's charset says.
    for (const encoding of ['utf8', 'latin1', 'utf16le'] as const) {
      const text = Buffer.from(request.body).toString(encoding);
      parts.push(text, ...strings(tryParse(text)));
    }
  }
  const query = new URL(request.path, 'http://x').searchParams.get('query');
  if (query !== null) parts.push(...strings(tryParse(query)));
  return parts.join('\n');
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A load answer without its rows (single or multi shape); anything else as it is. */
function withoutRows(parsed: unknown): unknown {
  if (typeof parsed !== 'object' || parsed === null) return parsed;
  const { data: _rows, results, ...rest } = parsed as Record<string, unknown>;
  return Array.isArray(results) ? { ...rest, results: results.map(withoutRows) } : rest;
}

/** Every string key and value of a parsed JSON document, iteratively so deep nesting cannot overflow the stack. */
function strings(value: unknown): string[] {
  const found: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') found.push(next);
    else if (Array.isArray(next)) for (const item of next) stack.push(item);
    else if (typeof next === 'object' && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        found.push(key);
        stack.push(item);
      }
    }
  }
  return found;
}

function sample(outcome: CaseOutcome): FailureSample {
  const { request } = outcome;
  const bodyBytes = request.body === undefined ? 0 : Buffer.byteLength(request.body);
  return {
    index: outcome.index,
    problems: outcome.problems,
    detail: outcome.detail,
    delayMs: outcome.delayMs,
    request: {
      method: request.method,
      path: excerpt(request.path),
      headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, excerpt(value)])),
      bodyBytes,
      body: request.body === undefined ? '' : excerpt(Buffer.from(request.body).toString('utf8')),
      chunked: request.chunked === true,
    },
    response: { status: outcome.status, body: excerpt(outcome.body) },
  };
}

function excerpt(text: string): string {
  return text.length <= EXCERPT_CHARS ? text : `${text.slice(0, EXCERPT_CHARS)}… (${text.length} chars)`;
}
