/**
 * Cube's own parser of date ranges and phrases ("last 7 days"), which its
 * gateway does not export: reached by its dist path, here only, so an
 * upgrade that moves it breaks one import (test/unit/cube/cube-internals.test.ts).
 */
export { dateParser } from '@cubejs-backend/api-gateway/dist/src/dateParser';
