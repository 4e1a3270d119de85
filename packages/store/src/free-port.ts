import net from "node:net";

// Test support (exported from "@doorbell/store/testing"): one port picker for every package's tests.

/** Ports this process has handed out: never twice, whether or not their process listens yet. */
const handedOut = new Set<number>();

/**
 * A loopback port free now, for a process started later. Picked below Linux's ephemeral range
 * (32768–60999): a port the kernel hands out would be free only until some outgoing connection of
 * a test running beside this one takes it as its local port, before the process listens.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    // Two calls before either process listens would otherwise both find the same port free (a
    // holder and its forwarder once did, and the second process failed with EADDRINUSE).
    if (handedOut.has(port)) continue;
    const server = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (bound) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      handedOut.add(port);
      return port;
    }
  }
}
