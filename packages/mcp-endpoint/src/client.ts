// @doorbell/mcp-endpoint/client: the client side only, so an agent loads no server code.

export { type FetchLike, scopedSignalFetch } from "./client-fetch.js";
