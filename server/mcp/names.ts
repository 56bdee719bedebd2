/** The nine MCP servers, in the order the catalog lists them. */
export const SERVER_NAMES = [
  'price-prediction',
  'market-intelligence',
  'blockchain-explorer',
  'token-intelligence',
  'portfolio-analytics',
  'whale-intelligence',
  'social-intelligence',
  'kol-analytics',
  'project-intelligence',
] as const;

export type ServerName = (typeof SERVER_NAMES)[number];
