import { classifyGatewayError, markDriverError } from '../../../src/cube/engine/errors';
import { ServiceError } from '../../../src/errors';

/**
 * Which failures are the client's (4xx) and which the service's (5xx), on the
 * messages ClickHouse, the driver and Cube's gateway really produce (codes
 * from ClickHouse's src/Common/ErrorCodes.cpp). The integration tier provokes
 * the same failures through the running service (test/integration/errors/).
 */

const queueError = (error: string) => classifyGatewayError(400, { error });

describe('classifyGatewayError', () => {
  it("Cube's own verdicts on the query are invalid_query, with Cube's sentence", () => {
    const withType = classifyGatewayError(400, {
      error: 'Query should contain either measures, dimensions or timeDimensions with granularities in order to be valid',
      type: 'UserError',
    });
    expect(withType).toMatchObject({ code: 'invalid_query', message: expect.stringMatching(/^Query should contain/) });
    expect(classifyGatewayError(400, { error: '"order" must be an object', stack: 'UserError: …' }).code).toBe('invalid_query');
  });

  it.each([
    ['max_query_size', 'Code: 62. DB::Exception: Max query size exceeded: (at row 1). (SYNTAX_ERROR)', 'query_too_large'],
    ['max_execution_time', 'Code: 159. DB::Exception: Timeout exceeded: elapsed 61.2 seconds, maximum: 60. (TIMEOUT_EXCEEDED)', 'query_timeout'],
    [
      'max_result_rows',
      'Code: 396. DB::Exception: Limit for result exceeded, max rows: 1.00 million, current rows: 1.05 million. (TOO_MANY_ROWS_OR_BYTES)',
      'result_too_large',
    ],
    [
      'max_memory_usage',
      'Code: 241. DB::Exception: Memory limit (for query) exceeded: would use 4.00 GiB, maximum: 4.00 GiB. (MEMORY_LIMIT_EXCEEDED)',
      'query_too_expensive',
    ],
  ])("the query limit ClickHouse enforces (%s) is the client's", (_limit, message, code) => {
    const failure = queueError(message);
    expect(failure.code).toBe(code);
    expect(failure.message).not.toMatch(/Code:|DB::Exception/);
  });

  it("the server's own memory limit (total) is the service's failure, not the query's", () => {
    expect(queueError('Code: 241. DB::Exception: Memory limit (total) exceeded: would use 20.1 GiB, maximum: 20.0 GiB. (MEMORY_LIMIT_EXCEEDED)').code).toBe(
      'internal',
    );
  });

  it("a value of the query the column cannot take is invalid_query with ClickHouse's first sentence, without the SQL", () => {
    const failure = queueError(
      "Code: 6. DB::Exception: Cannot parse string 'abc' as UInt64: syntax error at begin of string. Note: there are toUInt64OrZero and toUInt64OrNull functions, which returns zero/NULL instead of throwing exception. In scope SELECT count(*) FROM numbers WHERE number = 'abc'. (CANNOT_PARSE_TEXT)",
    );
    expect(failure.code).toBe('invalid_query');
    expect(failure.message).toBe("The database could not use a value of the query: Cannot parse string 'abc' as UInt64: syntax error at begin of string");
  });

  it('any other ClickHouse error (a table or column the model names that is gone) is internal, with a generic sentence', () => {
    const failure = queueError(
      "Code: 60. DB::Exception: Unknown table expression identifier 'vanishing_table' in scope SELECT count(*) FROM vanishing_table. (UNKNOWN_TABLE)",
    );
    expect(failure).toMatchObject({ code: 'internal', message: 'Internal error' });
    expect(JSON.stringify(failure.detail)).toMatch(/vanishing_table/);
  });

  it('an unreachable server is warehouse_unavailable, naming nothing of the network', () => {
    const failure = queueError('Error: ClickHouse server unreachable (ECONNREFUSED): connect ECONNREFUSED 10.0.0.7:8123');
    expect(failure.code).toBe('warehouse_unavailable');
    expect(failure.message).not.toMatch(/ECONNREFUSED|10\.0\.0\.7/);
  });

  it("Cube's row-limit message is invalid_query; any other 500 is internal", () => {
    expect(classifyGatewayError(500, { error: 'Error: The query limit has been exceeded' }).code).toBe('invalid_query');
    expect(classifyGatewayError(500, { error: 'TypeError: Cannot read properties of undefined' })).toMatchObject({
      code: 'internal',
      message: 'Internal error',
    });
  });
});

describe('markDriverError', () => {
  it('writes a network code from the cause chain into the message, which classification then reads', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const marked = markDriverError(new Error('request failed', { cause: socket })) as Error;
    expect(marked.message).toBe('ClickHouse server unreachable (ECONNREFUSED): request failed');
    expect(queueError(String(marked)).code).toBe('warehouse_unavailable');
  });

  it.each(['ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'ENOTFOUND'])('%s is unreachable', (code) => {
    expect((markDriverError(Object.assign(new Error('x'), { code })) as Error).message).toMatch(/^ClickHouse server unreachable/);
  });

  it("writes a ClickHouse code the client keeps apart from the message as ClickHouse's own opening", () => {
    const clickhouse = Object.assign(new Error("Cannot parse string 'x' as Int32"), { code: '6', type: 'CANNOT_PARSE_TEXT' });
    expect((markDriverError(clickhouse) as Error).message).toBe("Code: 6. Cannot parse string 'x' as Int32");
  });

  it('leaves other errors as they are', () => {
    const plain = new Error('something else');
    expect(markDriverError(plain)).toBe(plain);
    expect(markDriverError(plain)).not.toBeInstanceOf(ServiceError);
  });
});
