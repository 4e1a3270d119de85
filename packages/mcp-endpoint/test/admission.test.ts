// A process serves at most so many MCP requests at once; more wait their
// turn in arrival order, and past the waiting room a request is refused at once with 503 and
// Retry-After. Long-lived streams (subscriptions/listen) hold no place once they are open.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAdmission } from "../src/admission.js";
import { createMcpEndpoint, type McpEndpoint } from "../src/endpoint.js";
import { modernPost } from "./modern-post.js";

const PUBLIC_URL = "http://127.0.0.1:9";

describe("admission", () => {
  it("serves the limit at once, then lets waiting requests in in arrival order, and refuses past the room", async () => {
    const admission = createAdmission({ concurrent: 2, waiting: 2 });
    const first = await admission.enter();
    const second = await admission.enter();
    expect(admission.wouldRefuse()).toBe(false); // it would wait its turn
    const order: string[] = [];
    const inTurn = (name: string) =>
      admission.enter().then((release) => {
        order.push(name);
        return release;
      });
    const third = inTurn("third");
    const fourth = inTurn("fourth");
    expect(admission.wouldRefuse()).toBe(true);
    expect(admission.refused).toBe(0);
    expect(await admission.enter()).toBeUndefined(); // the room is full
    expect([admission.active, admission.queued]).toEqual([2, 2]);

    first?.();
    first?.(); // a second call changes nothing
    (await third)?.();
    second?.();
    (await fourth)?.();
    expect(order).toEqual(["third", "fourth"]);
    expect([admission.active, admission.queued]).toEqual([0, 0]);
  });

  it("a batch takes its places all at once, waits its turn whole, and no newcomer overtakes it", async () => {
    const admission = createAdmission({ concurrent: 3, waiting: 4 });
    const first = await admission.enter(2);
    const order: string[] = [];
    const inTurn = (name: string, places: number) =>
      admission.enter(places).then((release) => {
        order.push(name);
        return release;
      });
    const batch = inTurn("batch of 3", 3); // one place is free, but it needs three
    const single = inTurn("single", 1); // would fit now, but waits behind the batch
    expect(await admission.enter(1)).toBeUndefined(); // 3 + 1 places already wait: the room is full
    expect([admission.active, admission.queued, admission.refused]).toEqual([2, 4, 1]);

    first?.();
    (await batch)?.();
    (await single)?.();
    expect(order).toEqual(["batch of 3", "single"]);
    expect([admission.active, admission.queued]).toEqual([0, 0]);
    expect(await admission.enter(4).catch((error: Error) => error.message)).toBe(
      "a request takes from 1 to 3 places, not 4",
    );
  });

  it("refuses limits that are not whole numbers", () => {
    expect(() => createAdmission({ concurrent: 0, waiting: 1 })).toThrow(/at least 1/);
    expect(() => createAdmission({ concurrent: 2.5, waiting: 1 })).toThrow(/whole number/);
    expect(() => createAdmission({ concurrent: 1, waiting: -1 })).toThrow(/at least 0/);
  });
});

describe("an MCP endpoint with room for 2 requests and 1 waiting", () => {
  let endpoint: McpEndpoint<undefined> | undefined;
  afterEach(async () => endpoint?.close());

  /** An endpoint whose one tool answers when the test says so. */
  function gatedEndpoint() {
    const gates = new Map<string, () => void>();
    const started: string[] = [];
    endpoint = createMcpEndpoint<undefined>({
      publicUrl: PUBLIC_URL,
      name: "admission-test",
      version: "1.0.0",
      instructions: "test",
      role: "holder",
      toolRateLimit: false,
      admission: { concurrent: 2, waiting: 1 },
      register(server) {
        server.registerTool(
          "wait",
          { description: "answers when released", inputSchema: z.object({ name: z.string() }) },
          async ({ name }) => {
            started.push(name);
            await new Promise<void>((resolve) => gates.set(name, resolve));
            return { content: [{ type: "text", text: `done ${name}` }] };
          },
        );
        return undefined;
      },
    });
    const open = (name: string) => gates.get(name)?.();
    return { endpoint, started, open, gates };
  }

  const post = (ep: McpEndpoint<undefined>, method: string, params: Record<string, unknown>, id: string) =>
    ep(new Request(`${PUBLIC_URL}/mcp`, modernPost(method, params, { id })), { clientAddress: "127.0.0.1" });
  const call = (ep: McpEndpoint<undefined>, name: string) =>
    post(ep, "tools/call", { name: "wait", arguments: { name } }, name);
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(check()).toBe(true);
  };

  it("serves two, keeps the third waiting, refuses the fourth with 503 and Retry-After, then serves the third", async () => {
    const { endpoint: ep, started, open, gates } = gatedEndpoint();
    const a = call(ep, "a");
    const b = call(ep, "b");
    await until(() => gates.has("a") && gates.has("b"));
    const c = call(ep, "c");
    const refused = await call(ep, "d");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toMatchObject({
      error: { message: "the holder is busy; retry in a second" },
    });
    expect(started).toEqual(["a", "b"]); // c waits for a place, d never ran
    expect([ep.admission.active, ep.admission.queued, ep.admission.refused]).toEqual([2, 1, 1]);

    open("a");
    expect(await (await a).text()).toContain("done a");
    await until(() => gates.has("c"));
    open("b");
    open("c");
    expect(await (await b).text()).toContain("done b");
    expect(await (await c).text()).toContain("done c");
    expect(started).toEqual(["a", "b", "c"]);
  });

  it("open subscriptions/listen streams hold no place: with three open, a tool call is still served", async () => {
    const { endpoint: ep, open, gates } = gatedEndpoint();
    const streams: Response[] = [];
    for (const id of ["l1", "l2", "l3"]) {
      const response = await post(
        ep,
        "subscriptions/listen",
        { notifications: { toolsListChanged: true } },
        id,
      );
      expect(response.status).toBe(200);
      streams.push(response);
    }
    const answer = call(ep, "after-listeners");
    await until(() => gates.has("after-listeners"));
    open("after-listeners");
    expect(await (await answer).text()).toContain("done after-listeners");
    for (const stream of streams) await stream.body?.cancel();
  });
});
