/**
 * The lint gate (`npm run lint`, part of `npm test`): typescript-eslint with type information, so that a
 * promise nobody awaits or handles, or one handed where nothing will wait for it, is an error; plus an
 * import-cycle check over every module. docs/contributing.md lists what is on, what is off and why. The type
 * check itself (tsc, with noUnusedLocals and noUnusedParameters) and knip (unused files, exports and
 * dependencies) run beside it.
 */
import { defineConfig } from 'eslint/config';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';
import globals from 'globals';

export default defineConfig(
  {
    ignores: ['dist/**', 'web/dist/**', 'node_modules/**', '.tools/**', '.portcullis/**', 'test/artifacts/**', '**/.venv/**', 'bench/results/**'],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      // Sources import each other as `./x.js` (NodeNext); the cycle check follows that to `./x.ts`.
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.mjs', '.js', '.json', '.node'], extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // A leading underscore marks a name kept on purpose: a field left out of a rest copy, a required slot.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // An `async` method that does not await still honours a Promise-returning interface, and turns a
      // throw into a rejection; dropping `async` would change that, so this style rule stays off.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The build and tool scripts and the CLI shim are plain JavaScript outside the TypeScript project.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    // Tests, the bench, the scripts and the CLI read untyped JSON replies and child-process output; typing
    // each one would add noise, not catch bugs. The promise, cycle and unused rules still hold there.
    files: ['test/**', 'bench/**', 'scripts/**', 'src/cli/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: {
      // chai's property assertions (`expect(x).to.be.true`) are expressions by design.
      '@typescript-eslint/no-unused-expressions': 'off',
      // Test helpers hand back closures (`{ stop, close }`) typed as methods; destructuring them is the idiom.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
