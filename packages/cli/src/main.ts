import { AGENT_USAGE, agentCommand } from "./commands/agent.js";
import { CATALOGUE_USAGE, catalogueCommand } from "./commands/catalogue.js";
import { CHECK_USAGE, checkCommand } from "./commands/check.js";
import { DELIVERIES_USAGE, deliveriesCommand } from "./commands/deliveries.js";
import { ENDPOINTS_USAGE, endpointsCommand } from "./commands/endpoints.js";
import { FORWARDER_USAGE, forwarderCommand } from "./commands/forwarder.js";
import { KEYS_USAGE, keysCommand } from "./commands/keys.js";
import { LISTEN_USAGE, listenCommand } from "./commands/listen.js";
import { SERVE_USAGE, serveCommand } from "./commands/serve.js";
import { WEBHOOK_USAGE, webhookCommand } from "./commands/webhook.js";
import { errorLine } from "./error-line.js";
import { type Io, processIo, UsageError } from "./io.js";
import { cliVersion } from "./version.js";

interface Command {
  /** One line for `doorbell --help`. */
  summary: string;
  /** The whole help, printed by `doorbell <command> --help`. */
  usage: string;
  run: (args: readonly string[], io: Io) => Promise<number>;
}

/** Every command; a new one is one entry here. */
const COMMANDS: Record<string, Command> = {
  serve: {
    summary: "run the intent holder (MCP endpoint, pages, mailbox)",
    usage: SERVE_USAGE,
    run: serveCommand,
  },
  forwarder: {
    summary: "run a forwarder in front of a holder (push profile §7)",
    usage: FORWARDER_USAGE,
    run: forwarderCommand,
  },
  catalogue: {
    summary: "import offers from a JSON or CSV catalogue file",
    usage: CATALOGUE_USAGE,
    run: catalogueCommand,
  },
  webhook: {
    summary: "sign or verify a Standard Webhooks request",
    usage: WEBHOOK_USAGE,
    run: webhookCommand,
  },
  agent: {
    summary: "watch one intent and print its matches and doorbells",
    usage: AGENT_USAGE,
    run: agentCommand,
  },
  check: { summary: "check an agent-agreement/1 record", usage: CHECK_USAGE, run: checkCommand },
  deliveries: {
    summary: "the holder's delivery log: list, show and replay doorbells",
    usage: DELIVERIES_USAGE,
    run: deliveriesCommand,
  },
  endpoints: {
    summary: "endpoint health: list, show and enable the doorbell endpoints",
    usage: ENDPOINTS_USAGE,
    run: endpointsCommand,
  },
  keys: {
    summary: "export or import the seal keys, so every process of one database has the same",
    usage: KEYS_USAGE,
    run: keysCommand,
  },
  listen: {
    summary: "a doorbell endpoint for debugging: verify, print, forward (like stripe listen)",
    usage: LISTEN_USAGE,
    run: (args, io) => listenCommand(args, io),
  },
};

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return `doorbell ${cliVersion()} — tells AI agents that something changed, safely.

Usage: doorbell <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`)
  .join("\n")}

  doorbell <command> --help   that command's options
  doorbell --version          the version

An error is one line on stderr; DOORBELL_DEBUG=1 adds the stack trace.
`;
}

/** --help or -h among the arguments (before a lone "--", after which everything is an operand). */
function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}

/**
 * Runs one command line and returns the exit code: 0 done, 1 refused or failed, 2 usage error
 * (some commands add their own, e.g. `check`). Nothing is thrown: an expected error is one line
 * on stderr, never a stack trace.
 */
export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === "--version" || name === "-v" || name === "version") {
    io.stdout(`${cliVersion()}\n`);
    return 0;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    const topic = name === "help" && args[0] !== undefined ? COMMANDS[args[0]] : undefined;
    io.stdout(topic === undefined ? overview() : `${topic.usage}\n`);
    return 0;
  }
  if (name === undefined) {
    io.stderr(overview());
    return 2;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    io.stderr(`doorbell: unknown command ${JSON.stringify(name)}\nsee \`doorbell --help\`\n`);
    return 2;
  }
  if (asksForHelp(args)) {
    io.stdout(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`doorbell ${name}: ${error.message}\nsee \`doorbell ${name} --help\`\n`);
      return 2;
    }
    io.stderr(`doorbell ${name}: ${errorLine(error, io.env)}\n`);
    return 1;
  }
}

export { type ServeControl, serveCommand } from "./commands/serve.js";
export { type Io, processIo } from "./io.js";
export { cliVersion } from "./version.js";
