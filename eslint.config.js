import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/', '**/node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A switch with a `default` branch has decided what the other values do (an unknown SSE
      // event is skipped, any other `typeof` is JSON `null`); the rule still fails a switch
      // without one that leaves a member of its union unhandled.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Off: an `async` function without `await` here implements a promise-returning contract
      // (NotificationBackend and IdempotencyRecords in memory, fastify's promise-style hooks,
      // test doubles and bench scenarios), and `async` is what turns its throw into a rejection
      // the caller's `.catch` sees.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read answers with `JSON.parse` and inject's `response.json()`, and compare them with
    // vitest's asymmetric matchers (`expect.any`, `expect.stringMatching`); all of these are
    // typed `any`, and the expectation itself checks the shape at run time, so a cast on each
    // line would only repeat it. Code under src/, packages/client/src/, bench/ and scripts/
    // keeps these rules.
    files: ['test/**/*.ts', 'packages/client/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
);
