import { QueryRefusal } from '../../../src/query/rules';
import { withNumericPaging } from '../../../src/query/paging';

// Cube's validator accepts "limit": "2" (Joi converts it) but Cube 0.33 then reads only numbers.
describe('withNumericPaging', () => {
  it('reads digits in a string as that number, for limit and offset', () => {
    expect(withNumericPaging({ measures: ['Downloads.count'], limit: '2', offset: '30' })).toEqual({ measures: ['Downloads.count'], limit: 2, offset: 30 });
  });

  it('leaves numbers and absent keys alone', () => {
    const query = { measures: ['Downloads.count'], limit: 5 };
    expect(withNumericPaging(query)).toBe(query);
  });

  it.each(['2.0', '1e3', ' 2', '-1', '', '0x10', '1234567890123456'])('refuses %j as invalid_query naming the key', (value) => {
    let thrown: unknown;
    try {
      withNumericPaging({ limit: value });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(QueryRefusal);
    expect(thrown).toMatchObject({ code: 'invalid_query', rule: 'paging', message: expect.stringMatching(/^"limit" must be a whole number/) });
  });
});
