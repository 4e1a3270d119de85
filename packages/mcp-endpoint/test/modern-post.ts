// One raw MCP 2026-07-28 POST for the endpoint's own tests: the standard headers and the
// per-request `_meta` (the holder's test harness has the same helper for its servers).

const MODERN_VERSION = "2026-07-28";

export function modernPost(
  method: string,
  params: Record<string, unknown> = {},
  options: { id?: string | number } = {},
): { method: "POST"; headers: Record<string, string>; body: string } {
  const name = (params.name ?? params.uri) as string | undefined;
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN_VERSION,
      "mcp-method": method,
      ...(name === undefined ? {} : { "mcp-name": name }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: options.id ?? 1, method, params: { _meta: meta, ...params } }),
  };
}
