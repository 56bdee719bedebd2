// Type-aware lint: floating promises and type-only imports are the two habits STYLE.md asks for.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const OPERATOR_BOUNDARY = {
  regex: '(^|/)operator/',
  message: 'server/ must not import operator/: their contracts are crds/ and the SQL schema (DESIGN §2).',
};

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', '.tools/', 'coverage/', 'web/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  // server/ and operator/ never import each other: their contracts are crds/ and the SQL schema
  // (DESIGN §2). test/operator/boundaries.test.ts checks the rule catches a violation.
  {
    files: ['operator/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)server/', message: 'operator/ must not import server/: its contracts are crds/ and the SQL schema (DESIGN §2).' }] }],
    },
  },
  {
    files: ['server/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [OPERATOR_BOUNDARY] }],
    },
  },
  {
    // The tool contract (DESIGN.md §2): the tool definition, registry, envelope and the nine
    // server names import nothing from the app, so servers and gateway both build on it. (A later
    // block replaces a rule's options for the files it matches, so it repeats the operator one.)
    files: ['server/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            OPERATOR_BOUNDARY,
            { group: ['../*', 'fastify', '@fastify/*', 'pg'], message: 'server/mcp/ is the tool contract: it imports nothing from the app.' },
          ],
        },
      ],
    },
  },
);
