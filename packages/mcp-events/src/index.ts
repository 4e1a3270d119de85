export * from "./protocol/index.js";
export * from "./server/index.js";
export * from "./client/index.js";
