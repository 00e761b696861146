import { EXPECTED_SCHEMAS } from '../contract/spec-meta';
import { defaultService } from '../support/default-service';
import type { TestService } from '../support/service';
import { meta, send } from '../support/api';

let service: TestService;
beforeAll(async () => {
  service = await defaultService();
});

describe('GET /v1/data/meta/', () => {
  it('answers the ten cubes of the spec, field by field, in the spec order', async () => {
    const res = await meta(service).expect(200);
    expect(Object.keys(res.body)).toEqual(['schemas']);
    expect(res.body.schemas.map((s: { name: string }) => s.name)).toEqual(EXPECTED_SCHEMAS.map((s) => s.name));
    for (const [i, expected] of EXPECTED_SCHEMAS.entries()) {
      expect(res.body.schemas[i]).toStrictEqual(expected);
    }
  });

  it('answers the same without the trailing slash', async () => {
    const withSlash = await send(service, 'get', '/v1/data/meta/').expect(200);
    const without = await meta(service).expect(200);
    expect(without.body).toStrictEqual(withSlash.body);
  });

  it('never shows model descriptions written for data engineers', async () => {
    const res = await meta(service).expect(200);
    expect(JSON.stringify(res.body)).not.toMatch(/"description"|"public"|"meta"/);
  });
});
