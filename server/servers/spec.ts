import type { ServerModule } from '../mcp/tool.ts';

/** A server as its own folder declares it: its data tools only (the free tools are added for it). */
export type ServerSpec = ServerModule;
