import type { ServerDeps } from '../deps.ts';
import type { ServerSpec } from '../spec.ts';
import { forecastingTools } from './forecasting.ts';
import { technicalTools } from './technical.ts';
import { priceAlertTools } from './alerts.ts';
import { serverIcon } from '../icons.ts';

export function pricePrediction(deps: ServerDeps): ServerSpec {
  return {
    name: 'price-prediction',
    icon: serverIcon('price-prediction'),
    title: 'Price Prediction',
    description: 'Price forecasts with 50/80/95% intervals (coverage measured in and out of sample), backtests, volatility forecasts, technical indicators, signals and levels computed from daily price history.',
    chains: [],
    freshness: 'daily',
    dataFreshness:
      deps.market.name === 'snapshot'
        ? 'Computed from the offline snapshot of real daily prices: each asset is current to its own last day, which every answer states.'
        : `Computed from live daily prices (${deps.market.name}), falling back to the offline snapshot when it fails.`,
    tools: [...forecastingTools(deps), ...technicalTools(deps), ...priceAlertTools(deps)],
  };
}
