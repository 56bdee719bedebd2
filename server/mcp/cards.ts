// What a client reads before it connects, written from the registry:
// - a server card (the MCP server-card extension, modelcontextprotocol/experimental-ext-server-card,
//   schema.ts: field names as there) for the all-in-one endpoint, its discovery mode and each server,
//   served at <mcp-url>/server-card;
// - the AI catalog listing those cards (its docs/discovery.md; Agent-Card/ai-catalog), served at
//   /.well-known/ai-catalog.json;
// - server.json for the MCP Registry (schema 2025-12-11), committed at the repository root
//   (npm run registry:server-json) with the deployment's host as a URL variable.
// Every URL is built from the public base URL the caller passes (server/origin.ts: PUBLIC_BASE_URL),
// never from a request's Host.
import type { Icon } from '@modelcontextprotocol/server';
import type { ServerName } from './names.ts';
import { AllInOne, type AllInOneModule, type RegisteredServer, type Registry } from './registry.ts';

export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
export const SERVER_CARD_TYPE = 'application/mcp-server-card+json';
export const AI_CATALOG_TYPE = 'application/ai-catalog+json';
export const SERVER_JSON_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
/** The MCP Registry name (reverse DNS of cryptomcp.dev, the project's API group and _meta prefix). */
export const REGISTRY_NAME = 'dev.cryptomcp/cryptomcp';
/** Where cards and server.json put the project's own metadata. */
const META_KEY = 'dev.cryptomcp/endpoint';
/** Card and server.json descriptions are at most this long (both schemas). */
const DESCRIPTION_MAX = 100;
/** The all-in-one endpoint in one line (its module's description names every server and is too long for a card). */
const PRODUCT_LINE = 'Credit-metered crypto data: prices, forecasts, on-chain, tokens, whales, social, KOLs and DeFi.';

export interface Input {
  description?: string;
  isRequired?: boolean;
  isSecret?: boolean;
  format?: 'string' | 'number' | 'boolean' | 'filepath';
  default?: string;
  placeholder?: string;
  value?: string;
  choices?: string[];
}

export interface KeyValueInput extends Input {
  name: string;
  variables?: Record<string, Input>;
}

export interface Remote {
  type: 'streamable-http' | 'sse';
  url: string;
  headers?: KeyValueInput[];
  variables?: Record<string, Input>;
  supportedProtocolVersions?: string[];
}

export interface ServerCard {
  $schema: string;
  name: string;
  version: string;
  description: string;
  title?: string;
  websiteUrl?: string;
  icons?: Icon[];
  remotes?: Remote[];
  _meta?: Record<string, unknown>;
}

export interface CatalogEntry {
  identifier: string;
  type: string;
  url: string;
}

export interface AiCatalog {
  specVersion: '1.0';
  host: { displayName: string; identifier: string; documentationUrl: string };
  entries: CatalogEntry[];
}

/** What the cards are written from: the registry and the service's own facts. */
export interface CardSource {
  registry: Registry;
  allInOne: AllInOneModule;
  version: string;
  /** The protocol revisions every URL serves (gateway/classify.ts). */
  protocolVersions: readonly string[];
}

/** The public origins the documents name (server/origin.ts). */
export interface CardOrigins {
  /** PUBLIC_BASE_URL: where clients reach the MCP URLs. */
  base: string;
  /** Where people read how to connect (the dashboard's Connect page). */
  documentation: string;
}

/** One MCP URL of the service: its path under /mcp ('' for the all-in-one endpoint) and what it is. */
interface Endpoint {
  path: string;
  slug: string;
  server: RegisteredServer;
  description: string;
  servers: readonly ServerName[];
}

/** At most `max` characters, cut at a word with an ellipsis. */
export function fit(text: string, max = DESCRIPTION_MAX): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[,;:.\s]+$/, '')}…`;
}

function endpoints(source: CardSource): Endpoint[] {
  const servers = [...source.registry.keys()];
  const allInOne = new AllInOne(source.registry, source.allInOne);
  const all = allInOne.view(servers);
  const list: Endpoint[] = [
    { path: '', slug: 'cryptomcp', server: all, description: PRODUCT_LINE, servers },
    ...[...source.registry.values()].map((s) => ({ path: `/${s.name}`, slug: `cryptomcp-${s.name}`, server: s, description: fit(s.description), servers: [s.name as ServerName] })),
  ];
  if (source.allInOne.discoveryTools) {
    const discovery = allInOne.discovery(all);
    list.splice(1, 0, { path: '/discover', slug: 'cryptomcp-discover', server: { ...discovery, title: `${all.title}, discovery mode` }, description: fit(`${PRODUCT_LINE.replace(/\.$/, '')}; lists only find, describe and call tools.`), servers });
  }
  return list;
}

/** The card namespace: the configured host, reversed (mcp.example.com → com.example.mcp). */
function namespaceOf(base: string): string {
  return new URL(base).hostname.replace(/[^A-Za-z0-9.-]/g, '-').split('.').reverse().join('.');
}

const API_KEY_HEADER: KeyValueInput = {
  name: 'x-api-key',
  description: 'A cryptomcp API key (cmcp_…) from the dashboard. Without it, the client signs in with OAuth instead.',
  isRequired: false,
  isSecret: true,
};

function cardOf(source: CardSource, origins: CardOrigins, endpoint: Endpoint): ServerCard {
  const base = origins.base.replace(/\/+$/, '');
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: `${namespaceOf(base)}/${endpoint.slug}`,
    version: source.version,
    description: endpoint.description,
    title: fit(endpoint.server.title),
    websiteUrl: origins.documentation,
    icons: endpoint.server.icons,
    remotes: [{ type: 'streamable-http', url: `${base}/mcp${endpoint.path}`, headers: [API_KEY_HEADER], supportedProtocolVersions: [...source.protocolVersions] }],
    _meta: { [META_KEY]: { servers: endpoint.servers, tools: endpoint.server.tools.size, catalog: `${base}/v1/catalog` } },
  };
}

/** Every card, by its MCP URL's path under /mcp ('' for {base}/mcp, '/discover', '/<server>'). */
export function serverCards(source: CardSource, origins: CardOrigins): Map<string, ServerCard> {
  return new Map(endpoints(source).map((e) => [e.path, cardOf(source, origins, e)]));
}

/** The AI catalog: one entry per card, the all-in-one endpoint first. */
export function aiCatalog(source: CardSource, origins: CardOrigins): AiCatalog {
  const base = origins.base.replace(/\/+$/, '');
  const publisher = new URL(base).hostname;
  return {
    specVersion: '1.0',
    host: { displayName: 'cryptomcp', identifier: publisher, documentationUrl: origins.documentation },
    entries: endpoints(source).map((e) => ({
      identifier: `urn:air:${publisher}:mcp:${e.slug}`,
      type: SERVER_CARD_TYPE,
      url: `${base}/mcp${e.path}/server-card`,
    })),
  };
}

/**
 * server.json for the MCP Registry: the all-in-one endpoint, whose URL names the deployment's host
 * as a variable (each deployment has its own), with every server's tools and costs in the
 * publisher-provided _meta.
 */
export function registryServerJson(source: CardSource): Record<string, unknown> {
  const [all] = endpoints(source);
  const url = (path: string) => `https://{host}/mcp${path}`;
  return {
    $schema: SERVER_JSON_SCHEMA,
    name: REGISTRY_NAME,
    title: all!.server.title,
    description: PRODUCT_LINE,
    version: source.version,
    remotes: [
      {
        type: 'streamable-http',
        url: url(''),
        headers: [API_KEY_HEADER],
        variables: { host: { description: 'Your cryptomcp deployment: the host (and port) of its PUBLIC_BASE_URL, e.g. mcp.example.com.', isRequired: true } },
      },
    ],
    _meta: {
      'io.modelcontextprotocol.registry/publisher-provided': {
        [META_KEY]: {
          discovery_url: url('/discover'),
          servers: [...source.registry.values()].map((s) => ({
            name: s.name,
            title: s.title,
            url: url(`/${s.name}`),
            tools: [...s.tools.values()].map((t) => ({ name: t.name, credits: t.credits })),
          })),
        },
      },
    },
  };
}
