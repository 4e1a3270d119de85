// doorbell check: the checker on the command line, one exit code per result, --json for scripts.
// Offline (--key-page) against the published record vectors of @doorbell/agreements.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type Io, run } from "../src/main.js";

const vectors = fileURLToPath(new URL("../../agreements/vectors/", import.meta.url));
const pages = [
  "--key-page",
  `${vectors}key-pages/seller.json`,
  "--key-page",
  `${vectors}key-pages/buyer.json`,
];
const record = (name: string) => `${vectors}records/${name}.json`;

function fakeIo(stdin = "") {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = {
    stdin: async () => new TextEncoder().encode(stdin),
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    env: {},
    readFile: async (path) => (await import("node:fs/promises")).readFile(path),
    now: () => 0,
    redirectedFileMode: () => undefined,
  };
  return { io, out: () => out.join(""), err: () => err.join("") };
}

describe("doorbell check", () => {
  it("exit 0 and the plain-words result for a record with two signatures", async () => {
    const t = fakeIo();
    expect(await run(["check", record("two-signatures-quote"), ...pages], t.io)).toBe(0);
    expect(t.out()).toMatch(
      /^Checks out, two signatures \(keys as supplied\): Seller s\.r\.o\. \(pty_seller00000000000001\) offered and Buyer a\.s\. \(pty_buyer000000000000002\) accepted/,
    );
    expect(t.out()).toContain("  seal: signed by pty_seller00000000000001");
    // The pages came from files: the verdict says only their giver vouches for them.
    expect(t.out()).toContain("  keys as supplied: the key pages were given to the check");
  });

  it("exit 3 for one signature and 4 for a reply recorded by a named party", async () => {
    const one = fakeIo();
    expect(await run(["check", record("our-signature"), ...pages], one.io)).toBe(3);
    expect(one.out()).toMatch(/^Checks out, one signature \(keys as supplied\)/);
    const reply = fakeIo();
    expect(await run(["check", record("their-reply"), ...pages], reply.io)).toBe(4);
    expect(reply.out()).toMatch(
      /^Their reply, recorded by a named party \(keys as supplied\): Seller s\.r\.o\./,
    );
  });

  it("exit 1 with the reason when the record does not check out", async () => {
    const t = fakeIo();
    expect(await run(["check", record("changed-term-unsealed"), ...pages], t.io)).toBe(1);
    expect(t.out()).toBe(
      "Does not check out: the record was changed after it was sealed: the seal does not cover this content.\n  (step 1, ERR_RECORD_SEAL)\n",
    );
  });

  it("--json gives the result, reason, code and step for a script", async () => {
    const t = fakeIo();
    expect(await run(["check", record("revoked-key"), "--json", ...pages], t.io)).toBe(1);
    expect(JSON.parse(t.out())).toMatchObject({
      ok: false,
      result: "does_not_check_out",
      code: "ERR_KEY_REVOKED",
      step: 4,
    });
    const ok = fakeIo();
    expect(await run(["check", record("revoked-after-signing"), "--json", ...pages], ok.io)).toBe(0);
    expect(JSON.parse(ok.out())).toMatchObject({
      ok: true,
      result: "two_signatures",
      keys: "as_supplied",
      summary: expect.stringMatching(/^Checks out, two signatures \(keys as supplied\)/),
      warnings: [expect.stringMatching(/revoked/)],
    });
  });

  it("reads the record from stdin with -", async () => {
    const { readFile } = await import("node:fs/promises");
    const t = fakeIo(await readFile(record("two-signatures-times"), "utf8"));
    expect(await run(["check", "-", ...pages], t.io)).toBe(0);
  });

  it("a key page only from the given pages: a trusted origin elsewhere does not check out", async () => {
    const t = fakeIo();
    expect(
      await run(
        ["check", record("two-signatures-quote"), "--trusted-origin", "https://keys.example", ...pages],
        t.io,
      ),
    ).toBe(1);
    expect(t.out()).toMatch(/is not a key page on a trusted host \(https:\/\/keys\.example\)/);
  });

  it("exit 2 when the record file cannot be read, saying why in one line", async () => {
    const t = fakeIo();
    expect(await run(["check", `${vectors}records/no-such-record.json`, ...pages], t.io)).toBe(2);
    expect(t.err()).toMatch(/cannot read the record .*no-such-record\.json: no such file/);
    expect(t.err()).not.toMatch(/\n\s+at /);
  });

  it("trusts no key page host by default: trust is configuration, shown in --help", async () => {
    const none = fakeIo();
    expect(await run(["check", record("two-signatures-quote")], none.io)).toBe(2);
    expect(none.err()).toMatch(/no key page host is trusted: give --trusted-origin URL/);
    const help = fakeIo();
    expect(await run(["check", "--help"], help.io)).toBe(0);
    expect(help.out()).toMatch(/Trust is configuration: no key page host is trusted until you name it/);
    expect(help.out()).toMatch(/DOORBELL_TRUSTED_ORIGINS/);
    expect(help.out()).toMatch(/5 could not check/);
    // The environment configures it too: only pages on that host count.
    const fromEnv = fakeIo();
    const io = {
      ...fromEnv.io,
      env: { DOORBELL_TRUSTED_ORIGINS: "https://keys.example, https://other.example" },
    };
    expect(await run(["check", record("two-signatures-quote"), ...pages], io)).toBe(1);
    expect(fromEnv.out()).toMatch(
      /not a key page on a trusted host \(https:\/\/keys\.example, https:\/\/other\.example\)/,
    );
  });

  it("exit 5, could not check, when a trusted key page host cannot be reached", {
    timeout: 60_000,
  }, async () => {
    const { createRecord, importSigningKey, signMessage } = await import("@doorbell/agreements");
    const { readFile, mkdtemp, writeFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const key = async (name: string) =>
      importSigningKey(JSON.parse(await readFile(`${vectors}keys/${name}.test-key.json`, "utf8")).jwk);
    // The published two-signature record, its messages signed again with key pages on a host
    // that is trusted but cannot be reached (".invalid" never resolves, RFC 6761), and sealed.
    const vector = JSON.parse(await readFile(record("two-signatures-quote"), "utf8"));
    const payload = (jws: string) =>
      JSON.parse(Buffer.from(jws.split(".")[1] as string, "base64url").toString("utf8"));
    const jku = (party: string) => `https://keys.invalid/.well-known/agent-agreements/${party}.json`;
    const seller = await key("seller");
    const offer = await signMessage(payload(vector.offer.jws), seller, {
      jku: jku("pty_seller00000000000001"),
    });
    const acceptance = await signMessage(payload(vector.acceptance.jws), await key("buyer"), {
      jku: jku("pty_buyer000000000000002"),
    });
    const sealed = await createRecord(
      {
        kind: "two_signatures",
        offer: offer.jws,
        acceptance: acceptance.jws,
        chain: vector.chain,
        offerCurrent: true,
      },
      { key: seller, jku: jku("pty_seller00000000000001"), now: vector.sealed_at },
    );
    const dir = await mkdtemp(`${tmpdir()}/doorbell-check-`);
    const file = `${dir}/record.json`;
    await writeFile(file, JSON.stringify(sealed));
    const t = fakeIo();
    const code = await run(["check", file, "--trusted-origin", "https://keys.invalid"], t.io);
    expect({ code, out: t.out() }).toMatchObject({
      code: 5,
      out: expect.stringMatching(/^Could not check: /),
    });
  });

  it("exit 2 for a usage mistake", async () => {
    const t = fakeIo();
    expect(await run(["check"], t.io)).toBe(2);
    expect(t.err()).toMatch(/give exactly one record file/);
    expect(await run(["check", "a.json", "--trusted-origin", "not a url", ...pages], fakeIo().io)).toBe(2);
  });
});
