// ESLint (flat config): typescript-eslint's recommended rules plus the type-aware rules that catch real bugs
// (promises nobody awaits, async callbacks where a sync one is expected, throwing non-Errors, ...).
// Formatting is Prettier's job (npm run format:check), import boundaries dependency-cruiser's (npm run lint:deps).
import js from '@eslint/js';
import globals from 'globals';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: ['node_modules/', 'data/', 'coverage/'],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  // TypeScript: the server, its tests and the benchmarks.
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Real problems only; layout and naming are not linted.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],

      // Type-aware: promises and errors.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      // Like only-throw-error's defaults: passing on a caught `unknown` reason is fine, a string or a plain object is not.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Type-aware: values that do not mean what they look like.
      '@typescript-eslint/no-base-to-string': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/no-implied-eval': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },

  // `any` switches type checking off: not in application code, but where it is the idiom: Kysely<any> in the
  // dialect helpers and migrations (schema-agnostic by design), and response bodies in tests.
  {
    files: ['src/db/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },

  // The watch page's player: a plain browser script (ES5-style IIFE), served as is.
  {
    files: ['src/web/assets/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: 2022, // tsconfig.assets.json's target
      sourceType: 'script',
      globals: { ...globals.browser },
    },
    rules: {
      'no-unused-vars': ['error', { caughtErrors: 'none' }],
    },
  },

  // Node scripts and the config files at the root (ESM, and the CommonJS dependency-cruiser config).
  {
    files: ['*.js', '*.mjs', 'scripts/**/*.js', 'scripts/**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
  },
);
