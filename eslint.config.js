// Type-aware lint: floating promises and type-only imports are the two habits STYLE.md asks for.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  {
    // The tool contract (DESIGN.md §2): the tool definition, registry, envelope and the nine
    // server names import nothing from the app, so servers and gateway both build on it.
    files: ['server/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*', 'fastify', '@fastify/*', 'pg'], message: 'server/mcp/ is the tool contract: it imports nothing from the app.' }] },
      ],
    },
  },
);
