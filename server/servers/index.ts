// The nine servers, each with its data tools plus the three free tools every server has.
import type { ServerModule } from '../mcp/tool.ts';
import type { AllInOneModule } from '../mcp/registry.ts';
import { serverIcon } from './icons.ts';
import { blockchainExplorer } from './blockchain-explorer/index.ts';
import { benchTools } from './common/bench-tools.ts';
import { discoveryTools } from './common/discovery-tools.ts';
import { freeTools } from './common/free-tools.ts';
import { kolAnalytics } from './kol-analytics/index.ts';
import { marketIntelligence } from './market-intelligence/index.ts';
import type { ServerDeps } from './deps.ts';
import type { ServerName } from '../mcp/names.ts';
import { portfolioAnalytics } from './portfolio-analytics/index.ts';
import { pricePrediction } from './price-prediction/index.ts';
import { projectIntelligence } from './project-intelligence/index.ts';
import { socialIntelligence } from './social-intelligence/index.ts';
import type { ServerSpec } from './spec.ts';
import { tokenIntelligence } from './token-intelligence/index.ts';
import { whaleIntelligence } from './whale-intelligence/index.ts';
import { alertManagementTools } from './common/alert-tools.ts';
import { priceEvaluator } from './price-prediction/alerts.ts';
import { socialEvaluator } from './social-intelligence/alerts.ts';
import { whaleEvaluator } from './whale-intelligence/alerts.ts';
import type { AlertKind, RuleEvaluator } from '../alerts/types.ts';

// A factory per server; only the servers this process serves are built (MCP_SERVERS).
const SPECS: Record<ServerName, (deps: ServerDeps) => ServerSpec> = {
  'price-prediction': pricePrediction,
  'market-intelligence': marketIntelligence,
  'blockchain-explorer': blockchainExplorer,
  'token-intelligence': tokenIntelligence,
  'portfolio-analytics': portfolioAnalytics,
  'whale-intelligence': whaleIntelligence,
  'social-intelligence': socialIntelligence,
  'kol-analytics': kolAnalytics,
  'project-intelligence': projectIntelligence,
};

export interface ServerModulesOptions {
  servers: readonly ServerName[];
  deps: ServerDeps;
  /** Adds bench_echo and bench_fail to market-intelligence. */
  benchTools?: boolean;
}

export function serverModules({ servers, deps, benchTools: withBench = false }: ServerModulesOptions): ServerModule[] {
  return (Object.keys(SPECS) as ServerName[]).filter((name) => servers.includes(name)).map((name) => SPECS[name](deps)).map((spec) => ({
    ...spec,
    tools: [
      ...spec.tools,
      ...freeTools(spec),
      ...(withBench && spec.name === 'market-intelligence' ? benchTools : []),
    ],
  }));
}

/**
 * The all-in-one endpoint ({base_url}/mcp) as a module: its name and description, the chains of
 * the servers it fronts, and its own three free tools (listed once, describing every tool the
 * credential may use). Its data tools are the servers' own (mcp/registry.ts, AllInOne); its
 * discovery mode ({base_url}/mcp/discover) lists only the meta-tools of common/discovery-tools.ts.
 */
export function allInOneModule(modules: readonly ServerModule[], deps: Pick<ServerDeps, 'alerts'>): AllInOneModule {
  const spec = {
    name: 'all' as const,
    title: 'cryptomcp (all servers)',
    description: `Every cryptomcp server a credential may use, at one URL: ${modules.map((m) => m.name).join(', ')}. Each tool is metered as on its own server.`,
    chains: [...new Set(modules.flatMap((m) => m.chains))],
    dataFreshness: 'As each server states (get_capabilities on a server, or each answer\'s metadata.data_as_of).',
    freshness: 'daily' as const,
  };
  // The alert management tools are on each alerting server; here they are listed once.
  const alerting = modules.some((m) => m.tools.some((t) => t.name === 'get_alerts'));
  return { ...spec, icon: serverIcon('all'), tools: [...freeTools(spec), ...(alerting ? alertManagementTools(deps.alerts) : [])], discoveryTools };
}

/** The evaluator of each kind of alert rule whose server this process serves. */
export function alertEvaluators(servers: readonly ServerName[], deps: ServerDeps): Partial<Record<AlertKind, RuleEvaluator>> {
  return {
    ...(servers.includes('price-prediction') ? { price: priceEvaluator(deps) } : {}),
    ...(servers.includes('whale-intelligence') ? { whale: whaleEvaluator(deps) } : {}),
    ...(servers.includes('social-intelligence') ? { social: socialEvaluator(deps) } : {}),
  };
}
