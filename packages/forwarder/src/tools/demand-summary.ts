/** intent_demand_summary, forwarded to the holder behind this forwarder. */
import { demandInput, demandOut } from "@doorbell/intents";
import { FORWARDED_GRID } from "./grid.js";
import { type ForwarderToolKit, readOnly } from "./kit.js";

export function registerDemandSummary({ pass, tool }: ForwarderToolKit): void {
  tool(
    "intent_demand_summary",
    {
      title: "Count active intents in one cell of the demand grid",
      description:
        "How many active intents the holder has in one cell of its band grid; small cells are withheld. Public.",
      inputSchema: demandInput(FORWARDED_GRID),
      outputSchema: demandOut,
      annotations: readOnly,
    },
    pass("intent_demand_summary"),
  );
}
