// Type-aware lint: floating promises and type-only imports are the two habits STYLE.md asks for.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const SERVER_NAMES = [
  'price-prediction', 'market-intelligence', 'blockchain-explorer', 'token-intelligence', 'portfolio-analytics',
  'whale-intelligence', 'social-intelligence', 'kol-analytics', 'project-intelligence',
];

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
  {
    // The nine servers answer tools from what ServerDeps hands them (DESIGN.md §2): no HTTP
    // framework or database driver, no other server (shared code lives in servers/common/), and
    // of providers and stores only their declared shapes: values from a types.ts, anything else
    // as a type. test/lint/boundaries.test.ts checks each rule refuses a violation.
    files: ['server/servers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [OPERATOR_BOUNDARY] }],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['fastify', '@fastify/*', 'pg'], message: 'servers/ answer tools: the gateway owns HTTP and the stores own the database.' },
            { regex: `^\\.\\./(${SERVER_NAMES.join('|')})/`, message: 'a server never imports another server: share code through servers/common/.' },
            {
              regex: '^(\\.\\./)+(providers/(?!(.+/)?types\\.ts$)|db/|gateway/|dashboard/|metering/|keys/|accounts/|watchlists/(?!types\\.ts$)|forecasts/(?!types\\.ts$)|compute/(?!types\\.ts$))',
              allowTypeImports: true,
              message: 'servers/ see providers and stores through ServerDeps: values only from a types.ts, concrete modules as types only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Settings come from the environment in one place per program (config.ts), parsed and
    // checked there; everything else is handed its settings.
    files: ['server/**/*.ts', 'operator/**/*.ts'],
    ignores: ['**/config.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'read settings in a config.ts module and pass them in.' }],
    },
  },
  {
    // The bottom layers point nowhere up: analytics/ is pure math over plain shapes (lib/ only),
    // providers/ never reach for the servers or the gateway that use them.
    files: ['server/analytics/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [OPERATOR_BOUNDARY, { regex: '^\\.\\./(?!lib/)', message: 'analytics/ is pure math: it imports only lib/ (and its own modules).' }] }],
    },
  },
  {
    // The compute pool runs analytics/ on worker threads: its worker loads only the task table,
    // analytics/ and lib/; the pool itself adds errors.ts (its 429/503). Nothing of the app
    // (gateway, stores, providers, servers) may leak into a thread.
    files: ['server/compute/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [OPERATOR_BOUNDARY, { regex: '^\\.\\./(?!(analytics|lib)/|errors\\.ts$)', message: 'compute/ runs pure functions: it imports only analytics/, lib/ and errors.ts.' }] }],
    },
  },
  {
    files: ['server/providers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [OPERATOR_BOUNDARY, { regex: '^(\\.\\./)+(servers|gateway|dashboard|metering|keys|accounts)/', message: 'providers/ serve the servers; they never import them or the gateway.' }] }],
    },
  },
  {
    files: ['server/errors.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.', message: 'errors.ts is the bottom of server/: everything imports it, it imports nothing.' }] }],
    },
  },
);
