// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'build/', 'node_modules/', 'coverage/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // stdout is the log (src/log.ts): one JSON object a line.
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // Cube's internals and answers are untyped JSON; the adapter and the tests that read its answers say so with any.
    files: ['src/cube/**/*.ts', 'src/http/openapi.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The explorer page's module runs in the browser.
    files: ['public/**/*.js'],
    languageOptions: { sourceType: 'module', globals: globals.browser },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    ignores: ['public/**'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Cube model files run in Cube's compiler, which provides cube() and require().
    files: ['schema/**/*.js'],
    languageOptions: { globals: { cube: 'readonly' } },
  },
  {
    // Command-line scripts talk to the terminal.
    files: ['scripts/**/*.js'],
    rules: { 'no-console': 'off' },
  },
);
