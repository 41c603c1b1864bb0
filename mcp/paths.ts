// The MCP door's addresses (docs/mcp.md), apart from the door itself so that server/handler.ts
// can route on them without loading the door's code.
export const MCP_PATH = '/mcp';
export const MCP_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

/** Whether `server/handler.ts` routes this request target to the MCP door. */
export function isMcpPath(url: string): boolean {
  const path = url.split('?')[0];
  return path === MCP_PATH || path === MCP_METADATA_PATH;
}
