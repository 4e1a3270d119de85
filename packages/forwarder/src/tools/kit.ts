/** What every forwarder tool module is given: the registrar, the code swap and the push side. */
import type { ToolName } from "@doorbell/intents";
import { success, type ToolConfig } from "@doorbell/intents/server";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { ForwarderContext } from "../context.js";
import type { HolderAnswer, PushSide } from "../subscriptions.js";

/** Registers one tool behind the binding's guard; a test call stays a test call upstream (§6 rule 9). */
export type ForwarderRegistrar = <S extends z.ZodObject>(
  name: ToolName,
  config: ToolConfig<S> & { outputSchema: z.ZodObject },
  run: (args: z.infer<S>) => Promise<CallToolResult>,
) => void;

export interface ForwarderToolKit {
  ctx: ForwarderContext;
  push: PushSide;
  tool: ForwarderRegistrar;
  /** Opens the holder's code for a buyer call; forgets the record when the holder no longer knows it. */
  withHolderCode(
    forwarderCode: string,
    call: (holderCode: string) => Promise<CallToolResult>,
  ): Promise<CallToolResult>;
  /** The call as it came, to the holder's tool of the same name. */
  pass(name: ToolName): (args: Record<string, unknown>) => Promise<CallToolResult>;
}

export const readOnly: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const writes = (destructive: boolean, idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});

export const pushResult = (answer: HolderAnswer): CallToolResult =>
  "refused" in answer ? answer.refused : success(answer.subscription);
