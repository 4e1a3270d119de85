// A round-robin TCP balancer on loopback, for the soak: each connection goes to the next upstream
// in turn, as HAProxy's `mode tcp` or nginx's `stream` module would balance it, and its bytes are
// copied both ways without being read. Unlike the HTTP proxy (round-robin-proxy.ts), which parses
// and re-sends every request, it costs the machine almost nothing per request, so a load test on
// the same cores measures the holders rather than its own balancer. The upstream sees the client's
// own address: the connection to it is made from that address (any 127.0.0.0/8 address is local),
// so distinct clients are told apart without a forwarded header. An upstream that refuses the
// connection (a dead process) is skipped for the next one. `connections` counts per upstream.
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";

export interface TcpRoundRobin {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** Connections each upstream took, by its index in the list of ports given. */
  readonly connections: number[];
  close(): Promise<void>;
}

export async function startTcpRoundRobin(upstreamPorts: readonly number[]): Promise<TcpRoundRobin> {
  const connections = upstreamPorts.map(() => 0);
  const open = new Set<Socket>();
  let next = 0;

  const forward = (client: Socket, tries: number) => {
    if (tries >= upstreamPorts.length) {
      client.destroy();
      return;
    }
    const index = next++ % upstreamPorts.length;
    const upstream = connect({
      host: "127.0.0.1",
      port: upstreamPorts[index] as number,
      localAddress: client.remoteAddress,
      noDelay: true,
    });
    open.add(upstream);
    const drop = () => upstream.destroy();
    client.once("close", drop);
    upstream.once("close", () => open.delete(upstream));
    upstream.once("error", (error: NodeJS.ErrnoException) => {
      client.off("close", drop);
      // Refused: nothing reached a process, so the connection goes to the next upstream.
      if (error.code === "ECONNREFUSED") forward(client, tries + 1);
      else client.destroy();
    });
    upstream.once("connect", () => {
      connections[index] = (connections[index] as number) + 1;
      upstream.once("close", () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };

  const server: Server = createServer({ noDelay: true, pauseOnConnect: true }, (client) => {
    open.add(client);
    client.once("close", () => open.delete(client));
    client.on("error", () => client.destroy());
    forward(client, 0);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
