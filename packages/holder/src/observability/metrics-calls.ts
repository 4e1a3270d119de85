import { Counter, Histogram, type Registry } from "prom-client";
import { boundedLabel, methodLabel, routeLabel, statusLabel } from "./metrics-labels.js";

/** MCP tool calls by tool and outcome, and HTTP requests by route shape: counts and latencies. */
export function callMetrics(registers: Registry[]): {
  observeToolCall(tool: string, outcome: string, seconds: number): void;
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  countQuickCall(): void;
} {
  const toolCalls = new Counter({
    name: "doorbell_mcp_tool_calls_total",
    help: "MCP tool calls by tool and outcome.",
    labelNames: ["tool", "outcome"],
    registers,
  });
  const toolSeconds = new Histogram({
    name: "doorbell_mcp_tool_call_seconds",
    help: "Time of one MCP tool call, by tool.",
    labelNames: ["tool"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const requests = new Counter({
    name: "doorbell_http_requests_total",
    help: "HTTP requests by route shape, method and status class; aborted: the client hung up before the answer.",
    labelNames: ["route", "method", "status"],
    registers,
  });
  const requestSeconds = new Histogram({
    name: "doorbell_http_request_seconds",
    help: "Time to answer one HTTP request, by route shape.",
    labelNames: ["route"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const quickCalls = new Counter({
    name: "doorbell_mcp_quick_calls_total",
    help: "MCP tool calls answered beside the SDK: plain 2026-07-28 pulls (the rest go through the SDK; both are in doorbell_mcp_tool_calls_total).",
    registers,
  });
  const tool = boundedLabel();
  const outcome = boundedLabel();
  return {
    observeToolCall(name, result, seconds) {
      const label = tool(name);
      toolCalls.inc({ tool: label, outcome: outcome(result) });
      if (Number.isFinite(seconds) && seconds >= 0) toolSeconds.observe({ tool: label }, seconds);
    },
    observeRequest(pattern, method, status, seconds) {
      const route = routeLabel(pattern);
      requests.inc({ route, method: methodLabel(method), status: statusLabel(status) });
      if (Number.isFinite(seconds) && seconds >= 0) requestSeconds.observe({ route }, seconds);
    },
    countQuickCall: () => quickCalls.inc(),
  };
}
