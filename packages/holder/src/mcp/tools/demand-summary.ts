/** intent_demand_summary: one cell of the published grid, withheld below the threshold. */
import { demandOut } from "@doorbell/intents";
import { success } from "@doorbell/intents/server";
import type { Category, Country } from "../../model/types.js";
import { demandView } from "../views.js";
import { readOnly, type ToolContext, type ToolRegistrar } from "./context.js";

export function registerDemandSummary(tool: ToolRegistrar, context: ToolContext): void {
  const { services } = context;
  const grid = services.demand.grid();
  tool(
    "intent_demand_summary",
    {
      title: "Count active intents in one cell of the demand grid",
      description:
        "How many active intents fall in one cell of this holder's band grid: category × country (or region) × budget band. " +
        `A cell with fewer than ${grid.threshold} active intents is withheld ({ withheld: true }). Drafts are never counted. ` +
        `Budget bands (<currency>-<min>-<max>, min included, max excluded, empty max: no upper bound; "none": intents without a budget): ${grid.budgetBands.map((band) => band.id).join(", ")}. ` +
        "Public: no sign-in needed.",
      inputSchema: context.demandSchema,
      outputSchema: demandOut,
      annotations: readOnly,
    },
    async (args) => {
      const cell = {
        category: args.category as Category,
        country: args.country as Country,
        ...(args.region === undefined ? {} : { region: args.region }),
        budgetBand: args.budgetBand,
      };
      return success(demandView(await services.demand.summary(cell)));
    },
  );
}
