// Stands in for @apidevtools/json-schema-ref-parser under jest (package.json's
// moduleNameMapper). openapi-backend requires that package, which ships only
// as an ES module: Node 20.19+ can require it, jest's module loader cannot.
// The contract checks give openapi-backend a document object whose $refs are
// all local, so resolving those is all that is needed; it is done by
// dereference-json-schema, the library openapi-backend itself uses for that
// in its quick mode.
const { dereferenceSync } = require('dereference-json-schema');

const notNeeded = (name) => async () => {
  throw new Error(`json-schema-ref-parser's ${name} is not available under jest; pass openapi-backend a document object`);
};

module.exports = {
  parse: async (document) => {
    if (typeof document !== 'object' || document === null) return notNeeded('parse')();
    return document;
  },
  dereference: async (document) => dereferenceSync(document),
  resolve: notNeeded('resolve'),
};
