/**
 * The baseline of the serve bench, in its own process: a raw node:http server that reads a
 * JSON-RPC request body and answers the holder's own response bytes, optionally after the same
 * one-row read the holder makes (an intent by its code's keyed hash) on the same database.
 *
 *   RAW_OPTIONS='{"answer":"…","read":"/path/holder.sqlite"|"postgres://…","hash":"…"}' \
 *     node --import tsx bench/serve-raw.ts PORT
 */
import http from "node:http";

const port = Number(process.argv[2]);
const options = JSON.parse(process.env.RAW_OPTIONS ?? "{}") as {
  answer: string;
  read?: string;
  hash?: string;
};
const answer = Buffer.from(options.answer);
const QUERY = "select id, status from holder_intents where code_hash = $1";

/** The one-row read, or nothing. */
const read = await (async (): Promise<(() => Promise<unknown>) | undefined> => {
  if (options.read === undefined) return undefined;
  if (options.read.startsWith("postgres")) {
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: options.read });
    await client.connect();
    return () => client.query({ name: "intent_by_code", text: QUERY, values: [options.hash] });
  }
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(options.read, { readonly: true });
  const statement = db.prepare(QUERY.replace("$1", "?"));
  return async () => statement.get(options.hash);
})();

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", async () => {
    JSON.parse(Buffer.concat(chunks).toString("utf8"));
    await read?.();
    response.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
    response.end(answer);
  });
});
server.listen(port, "127.0.0.1", () => process.stdout.write("listening\n"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
