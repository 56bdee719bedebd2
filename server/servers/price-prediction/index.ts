import type { ServerSpec } from '../spec.ts';

// Data tools arrive with this server's own issue; until then it offers the three free tools.
export const pricePrediction: ServerSpec = {
  name: 'price-prediction',
  title: 'Price Prediction',
  description: 'Price forecasts, trend and volatility analysis computed from daily price history.',
  chains: ['ethereum', 'base', 'polygon', 'bsc', 'solana'],
  dataFreshness: 'No data tools are deployed on this server yet; only the free account tools answer.',
  tools: [],
};
