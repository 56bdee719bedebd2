// Lint: type-only imports and the import boundaries below. The one type-aware rule, floating
// promises (the other habit STYLE.md asks for), is oxlint's (`.oxlintrc.json`, `oxlint
// --type-aware`): its tsgolint checks types with TypeScript 7's compiler, 12 s of CPU for the tree
// where typescript-eslint's program on TypeScript 5.9 took about 45 s. So ESLint builds no type
// program.
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import tseslint from 'typescript-eslint';

const OPERATOR_BOUNDARY = {
  regex: '(^|/)operator/',
  message: 'server/ must not import operator/: their contracts are crds/ and the SQL schema (DESIGN §2).',
};

// ---- server/'s layers as allow-lists (DESIGN.md §2, docs/development.md "Where things are") ----
// Each layer names the layers it may import; any other import of server/'s own code fails lint
// (eslint-plugin-boundaries resolves each import to its file, so depth and `.ts` specifiers don't
// matter). Imports inside one folder are free; server/'s own files (config.ts, app.ts, ...) are
// a layer each, held to their lists among themselves too. test/lint/boundaries.test.ts probes
// every rule.
//
// A layer is a folder of server/ ('mcp'), 'servers/*' (each of the nine servers, one element
// apiece, so a server never imports another), 'servers/common', 'servers' (deps.ts, spec.ts,
// icons.ts, index.ts), or one of server/'s own files ('errors.ts'). In a list, typeOnly(x)
// allows `import type` only and contract(x) allows the layer's types.ts files (its declared shapes).
const FOLDERS = [
  'mcp', 'lib', 'analytics', 'compute', 'providers', 'db', 'metering', 'keys', 'accounts', 'forecasts', 'watchlists',
  'gateway', 'x402', 'payments', 'oauth', 'dashboard', 'telemetry', 'devnet', 'jobs', 'alerts', 'tasks',
];
const TOP_FILES = [
  'errors.ts', 'version.ts', 'public-types.ts', 'origin.ts', 'config.ts', 'metrics.ts', 'connections.ts', 'demo.ts',
  'app.ts', 'runtime.ts', 'cli.ts',
];
const typeOnly = (layer) => ({ layer, kind: 'type' });
const contract = (layer) => ({ layer, contract: true });
const SERVER_SHARED = { paths: ['server/servers/deps.ts', 'server/servers/spec.ts', 'server/servers/icons.ts'] };

// What a server sees: the tool contract, pure analytics, lib, its shared code, errors.ts, and of
// what ServerDeps hands it (providers, stores, the compute pool) the declared shapes: values from
// a types.ts, anything else as a type. Never app.ts, runtime.ts, config.ts, the gateway,
// metering, keys, accounts, payments, oauth, x402 or the database.
const SERVER_VIEW = [
  'mcp', 'analytics', 'lib', 'errors.ts', 'servers/common',
  contract('providers'), contract('watchlists'), contract('alerts'),
  typeOnly('providers'), typeOnly('forecasts'), typeOnly('watchlists'), typeOnly('compute'), typeOnly('alerts'),
];

const LAYERS = {
  // The bottom: imports nothing of the app.
  'errors.ts': [],
  'version.ts': [],
  'public-types.ts': [],
  'origin.ts': [],
  mcp: [],
  telemetry: [],
  lib: ['errors.ts'],
  analytics: ['lib'],
  // The worker pool for CPU-heavy tools: its workers run pure functions from analytics/.
  compute: ['analytics', 'lib', 'errors.ts', typeOnly('mcp')],
  // Data behind the tools. analytics/ is pure math they may reuse (sentiment, mentions).
  providers: ['lib', 'errors.ts', 'analytics', typeOnly('mcp')],
  db: ['errors.ts'],
  // The stores: the database and lib only, with the narrow exceptions in NARROW below.
  accounts: ['db', 'lib', 'errors.ts'],
  keys: ['db', 'lib', 'errors.ts'],
  metering: ['db', 'lib', 'errors.ts'],
  forecasts: ['db', 'lib', 'errors.ts'],
  watchlists: ['db', 'lib', 'errors.ts'],
  // The job runner (graphile-worker) and the alert rules, feed and webhooks it runs jobs for.
  jobs: ['db', 'lib', 'errors.ts'],
  alerts: ['db', 'lib', 'errors.ts', 'jobs'],
  // MCP tasks of long tools: their store and their wire shapes (the gateway runs them).
  tasks: ['db', 'lib', 'errors.ts'],
  // The nine servers, their shared code, and the files that assemble them (index.ts) and declare
  // what they are handed (deps.ts); a server sees deps.ts, spec.ts and icons.ts of those files.
  'servers/*': [...SERVER_VIEW, SERVER_SHARED],
  'servers/common': [...SERVER_VIEW, SERVER_SHARED],
  servers: [...SERVER_VIEW, 'servers/*'],
  // The request path in front of the tools.
  gateway: ['mcp', 'metering', 'keys', 'tasks', 'errors.ts', 'lib', 'telemetry', 'metrics.ts', typeOnly('public-types.ts')],
  x402: [
    'gateway', 'mcp', 'metering', 'keys', 'errors.ts', 'lib', 'telemetry', 'metrics.ts',
    typeOnly('db'), typeOnly('config.ts'), typeOnly('public-types.ts'),
  ],
  payments: ['db', 'lib', 'errors.ts', 'accounts', typeOnly('providers'), typeOnly('config.ts'), typeOnly('public-types.ts')],
  oauth: ['db', 'lib', 'errors.ts', 'keys', typeOnly('config.ts'), typeOnly('origin.ts')],
  dashboard: [
    'db', 'lib', 'errors.ts', 'accounts', 'keys', 'payments', 'oauth', 'alerts', 'public-types.ts',
    typeOnly('mcp'), typeOnly('providers'), typeOnly('config.ts'), typeOnly('origin.ts'),
  ],
  devnet: ['db', 'lib', 'errors.ts'],
  // server/'s own files: settings, metrics, the demo seed.
  'config.ts': ['errors.ts', 'lib', 'mcp', 'public-types.ts', contract('providers')],
  // The metrics registry reads the tallies in telemetry/ and the compute pool's stats shape.
  'metrics.ts': ['telemetry', typeOnly('compute')],
  'connections.ts': ['errors.ts', 'db', 'lib'],
  'demo.ts': ['accounts', 'db', 'keys', 'mcp', 'errors.ts', 'lib'],
  // The composition roots wire everything.
  'app.ts': ['*'],
  'runtime.ts': ['*'],
  'cli.ts': ['*'],
};

// Today's imports that cross the lists above, each allowed for the one file that needs it.
const NARROW = [
  // The one upstream HTTP client emits the upstream spans and events (telemetry has no imports).
  { from: 'server/providers/http.ts', to: ['server/telemetry/channels.ts', 'server/telemetry/tracing.ts'] },
  // A key belongs to an account: the key store checks the account id with the accounts' schema.
  { from: 'server/keys/store.ts', to: ['server/accounts/accounts.ts'] },
  // A key's scopes are server names, which the tool contract declares.
  { from: 'server/keys/store.ts', to: ['server/mcp/names.ts'] },
  // get_usage's store implements the contract's UsageReader (types only).
  { from: 'server/metering/usage.ts', to: ['server/mcp/tool.ts'], kind: 'type' },
  // A plan row answers in the public Plan shape (types only).
  { from: 'server/accounts/plans.ts', to: ['server/public-types.ts'], kind: 'type' },
  // The request log is written from what the gateway hands it (types only).
  { from: 'server/dashboard/requestLog.ts', to: ['server/gateway/plugin.ts'], kind: 'type' },
  // x402 prices in the token's base units with the converter next to its settings.
  { from: 'server/x402/plugin.ts', to: ['server/config.ts'] },
];

const TYPE_KINDS = ['type', 'typeof'];
const ELEMENTS = [
  { type: 'servers/common', pattern: 'server/servers/common', partialMatch: false },
  { type: 'servers/*', pattern: 'server/servers/*', partialMatch: false, capture: ['server'] },
  ...[...FOLDERS, 'servers'].map((f) => ({ type: f, pattern: `server/${f}`, partialMatch: false })),
  // server/'s own files, told apart by their file category below.
  { type: 'top', pattern: 'server', partialMatch: false },
];
const FILES = [
  ...TOP_FILES.map((f) => ({ category: f, pattern: `server/${f}` })),
  { category: 'contract', pattern: 'server/*/**/types.ts' },
];
const ALL_LAYERS = [...FOLDERS, 'servers', 'servers/*', 'servers/common', ...TOP_FILES];
const entity = (layer) => (TOP_FILES.includes(layer) ? { file: { categories: layer } } : { element: { type: layer } });
function allowed(item) {
  if (item.paths) return [{ to: { file: { path: item.paths } } }];
  const { layer, kind, contract: onlyContract } = typeof item === 'string' ? { layer: item } : item;
  if (layer === '*') return ALL_LAYERS.map((l) => ({ to: entity(l) }));
  const to = onlyContract ? { ...entity(layer), file: { categories: 'contract' } } : entity(layer);
  return [{ to, ...(kind ? { dependency: { kind: TYPE_KINDS } } : {}) }];
}
const POLICIES = [
  // Inside a folder anything goes; server/'s own files are one element too, but each has a list.
  {
    from: { element: { type: ALL_LAYERS.filter((l) => !TOP_FILES.includes(l)) } },
    allow: { dependency: { relationship: { to: 'internal' } } },
  },
  ...Object.entries(LAYERS).filter(([, list]) => list.length > 0).map(([layer, list]) => ({ from: entity(layer), allow: list.flatMap(allowed) })),
  ...NARROW.map(({ from, to, kind }) => ({
    from: { file: { path: from } },
    allow: { to: { file: { path: to } }, ...(kind ? { dependency: { kind: TYPE_KINDS } } : {}) },
  })),
];

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', '.tools/', 'coverage/', 'web/dist/', '.bench/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
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
    // Packages: the tool contract and the nine servers never touch HTTP or the database (the
    // gateway owns HTTP, the stores own the database). Which of server/'s own layers a file may
    // import is the allow-list below. (A later block replaces a rule's options for the files it
    // matches, so it repeats the operator pattern.)
    files: ['server/mcp/**/*.ts', 'server/servers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            OPERATOR_BOUNDARY,
            { group: ['fastify', '@fastify/*', 'pg'], message: 'mcp/ and servers/ answer tools: the gateway owns HTTP and the stores own the database.' },
          ],
        },
      ],
    },
  },
  {
    files: ['server/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': ELEMENTS,
      'boundaries/files': FILES,
    },
    rules: {
      // Anything local that no policy allows fails, including a file outside every layer (a new
      // folder must be given its allow-list here before it can import or be imported).
      'boundaries/dependencies': ['error', { default: 'disallow', checkUnknownLocals: true, checkInternals: true, policies: POLICIES }],
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
    files: ['server/errors.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.', message: 'errors.ts is the bottom of server/: everything imports it, it imports nothing.' }] }],
    },
  },
);
