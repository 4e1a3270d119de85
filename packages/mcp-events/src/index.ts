export * from "./client/index.js";
export * from "./protocol/index.js";
export * from "./server/index.js";
