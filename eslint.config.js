// Lint: a short, type-aware rule set aimed at real bugs (promises nobody awaits, promises where a callback is
// expected, `any` leaking through), plus the size limit on functions. Formatting is Prettier's job, not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'sdk/dist/**', 'node_modules/**', 'coverage/**', 'release/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Promises: every one awaited, returned, or explicitly let go with `void`; none passed where a callback returns nothing.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // `any` does not leak: no explicit any, and no unchecked use of a value typed any.
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      // A switch over a union names every member (or has a default).
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    // Units one can hold in one's head (CONTRIBUTING.md): tables (migrations' schemas, message catalogues) are exempt.
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    ignores: ['src/platform/db/migrations/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  {
    // Tests and benches: the same promise rules; `any` in test doubles and parsed answers is tolerated.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Test servers pass async handlers to http.createServer on purpose (their failures fail the test).
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      // Tests build odd inputs on purpose: control characters, numbers past 2^53, variables filled by callbacks.
      'no-control-regex': 'off',
      'no-loss-of-precision': 'off',
      'no-useless-assignment': 'off',
      'prefer-const': 'off',
      // vi.doMock's importOriginal<typeof import('…')>() is vitest's documented pattern.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
