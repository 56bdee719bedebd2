// Each server's icon: a 24×24 SVG (a coloured tile with a line glyph), sent in serverInfo.icons so
// clients can tell the nine apart in a connector list.
import type { ServerName } from '../mcp/names.ts';

const GLYPHS: Record<ServerName | 'all', { colour: string; path: string }> = {
  // The all-in-one endpoint: four tiles, one URL for every server.
  all: { colour: '#111827', path: 'M5 5h6v6H5zM13 5h6v6h-6zM5 13h6v6H5zM13 13h6v6h-6z' },
  'price-prediction': { colour: '#6d28d9', path: 'M5 17l4-5 3 3 6-8M15 7h3v3' },
  'market-intelligence': { colour: '#1d4ed8', path: 'M6 18V11M10 18V7M14 18v-5M18 18V5' },
  'blockchain-explorer': { colour: '#0f766e', path: 'M5 8h5v5H5zM14 11h5v5h-5zM10 10.5h4' },
  'token-intelligence': { colour: '#b45309', path: 'M12 5a7 7 0 1 0 0 14a7 7 0 1 0 0-14M9.5 12h5M12 9.5v5' },
  'portfolio-analytics': { colour: '#15803d', path: 'M12 5a7 7 0 1 0 7 7h-7zM14 4v6h6a6 6 0 0 0-6-6' },
  'whale-intelligence': { colour: '#0369a1', path: 'M4 13c3-5 9-5 12 0c1.5-1 3-1.5 4-1c-1 3-3 5-8 5s-7-2-8-4' },
  'social-intelligence': { colour: '#be185d', path: 'M5 6h14v9H10l-4 3v-3H5z' },
  'kol-analytics': { colour: '#a21caf', path: 'M12 5l2 4.5 5 .5-3.8 3.3 1.1 4.9L12 15.8 7.7 18.2l1.1-4.9L5 10l5-.5z' },
  'project-intelligence': { colour: '#4338ca', path: 'M5 19V9l7-4 7 4v10M9 19v-6h6v6' },
};

export function serverIcon(name: ServerName | 'all'): string {
  const { colour, path } = GLYPHS[name];
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="24" height="24">` +
    `<rect width="24" height="24" rx="5" fill="${colour}"/>` +
    `<path d="${path}" fill="none" stroke="#fff" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"/></svg>`
  );
}
