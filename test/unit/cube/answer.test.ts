import { LoadAnswer } from '../../../src/cube/answer';

describe('LoadAnswer', () => {
  it('serialises its body once and gives its pieces again', async () => {
    const body = { data: Array.from({ length: 2500 }, (_, i) => ({ n: i })) };
    const answer = new LoadAnswer(body, false);
    const first = await answer.json();
    expect(first.join('')).toBe(JSON.stringify(body));
    expect(await answer.json()).toBe(first);
  });
});
