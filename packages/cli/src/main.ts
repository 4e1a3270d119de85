import { AGENT_USAGE, agentCommand } from "./commands/agent.js";
import { CATALOGUE_USAGE, catalogueCommand } from "./commands/catalogue.js";
import { CHECK_USAGE, checkCommand } from "./commands/check.js";
import { FORWARDER_USAGE, forwarderCommand } from "./commands/forwarder.js";
import { SERVE_USAGE, serveCommand } from "./commands/serve.js";
import { WEBHOOK_USAGE, webhookCommand } from "./commands/webhook.js";
import { type Io, processIo, UsageError } from "./io.js";

const USAGE = `doorbell — tells AI agents that something changed, safely.

Commands:
${SERVE_USAGE}

${FORWARDER_USAGE}

${CATALOGUE_USAGE}

${WEBHOOK_USAGE}

${AGENT_USAGE}

${CHECK_USAGE}
`;

/** Runs one command line and returns the exit code: 0 done, 1 refused/failed, 2 usage error. */
export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case "serve":
        return await serveCommand(args, io);
      case "forwarder":
        return await forwarderCommand(args, io);
      case "catalogue":
        return await catalogueCommand(args, io);
      case "webhook":
        return await webhookCommand(args, io);
      case "agent":
        return await agentCommand(args, io);
      case "check":
        return await checkCommand(args, io);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.stdout(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`doorbell: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof Error && "code" in error && typeof error.code === "string") {
      io.stderr(`doorbell: ${error.message} (${error.code})\n`);
      return 1;
    }
    throw error;
  }
}

export { type ServeControl, serveCommand } from "./commands/serve.js";
export { type Io, processIo } from "./io.js";
