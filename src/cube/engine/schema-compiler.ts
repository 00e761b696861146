import { createRequire } from 'node:module';

/**
 * Cube's schema compiler, for the model checks of src/cube/models/: its
 * compiler (compiled again to read its errors one by one), and the YAML
 * parser Cube's own YAML compiler uses, so a file it cannot read is reported
 * as Cube reads it, with the file and line Cube omits.
 */
export { prepareCompiler } from '@cubejs-backend/schema-compiler';

type YamlListener = (event: 'open' | 'close', state: { position: number; result: unknown }) => void;

/** js-yaml as the schema compiler loads it (its own dependency, not ours). */
export const cubeYaml: { load(content: string, options?: { listener?: YamlListener }): unknown } = createRequire(
  require.resolve('@cubejs-backend/schema-compiler'),
)('js-yaml');
