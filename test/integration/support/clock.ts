/**
 * TEST_NOW (an ISO instant) moves the clock that the tests and the service in their process read, JavaScript's
 * Date (which Cube's relative date ranges count from), to that instant; it runs on from there at the real pace, by
 * a fixed offset. Timers keep the real clock. The engine's clock stays real: no statement of the service or of an
 * oracle reads it for an answer (docs/guides/testing.md, "Dates").
 */
const now = process.env.TEST_NOW;
if (now !== undefined) {
  const RealDate = Date;
  const offset = RealDate.parse(now) - RealDate.now();
  const shiftedNow = () => RealDate.now() + offset;
  globalThis.Date = new Proxy(RealDate, {
    construct: (target, args, newTarget) => Reflect.construct(target, args.length === 0 ? [shiftedNow()] : args, newTarget),
    apply: () => new RealDate(shiftedNow()).toString(),
    get: (target, property, receiver) => (property === 'now' ? shiftedNow : Reflect.get(target, property, receiver)),
  });
}
