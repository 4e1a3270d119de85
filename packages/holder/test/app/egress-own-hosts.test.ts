// The own-host rule (push profile §6 rule 1) over every name and address the holder knows as its
// own: its public URL's host and the `www.` twin, the extra host names it answers for, and the
// addresses of its network interfaces (where it listens). A look-alike name is still allowed.
import os from "node:os";
import { checkUrl, judgeAddress } from "@doorbell/webhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { holderEgressPolicy } from "../../src/app/holder.js";

const OWN = "the URL points to one of this server's own hosts";
// A public address this machine is made to have, as a holder listening on a public interface does.
const PUBLIC_INTERFACE = "93.184.216.34";

afterEach(() => {
  vi.restoreAllMocks();
});

const policy = () => {
  const real = os.networkInterfaces();
  vi.spyOn(os, "networkInterfaces").mockReturnValue({
    ...real,
    eth9: [
      {
        address: PUBLIC_INTERFACE,
        netmask: "255.255.255.0",
        family: "IPv4",
        mac: "00:00:00:00:00:00",
        internal: false,
        cidr: `${PUBLIC_INTERFACE}/24`,
      },
    ],
  });
  return holderEgressPolicy("production", "https://holder.example.com", [
    "doorbell.example.org:8443",
    "[2606:4700::6810:84e5]",
  ]);
};

describe("the holder's production egress refuses its own names and addresses", () => {
  it.each([
    "https://holder.example.com/hook",
    "https://HOLDER.example.com./hook",
    "https://www.holder.example.com/hook",
    "https://doorbell.example.org/hook",
    "https://www.doorbell.example.org/hook",
  ])("%s is one of the holder's own hosts", (url) => {
    expect(checkUrl(url, policy())).toEqual({ ok: false, reason: OWN });
  });

  it("refuses the addresses it listens on and the address hosts it answers for", () => {
    const made = policy();
    expect(judgeAddress(made, PUBLIC_INTERFACE)).toMatchObject({
      allowed: false,
      reason: "it is in a subnet this server blocks",
    });
    expect(judgeAddress(made, "2606:4700::6810:84e5").allowed).toBe(false);
    expect(judgeAddress(made, "1.1.1.1").allowed).toBe(true);
  });

  it("does not mistake a look-alike for its own host", () => {
    const made = policy();
    expect(checkUrl("https://www.holder.example.com.evil.test/hook", made).ok).toBe(true);
    expect(checkUrl("https://wwwholder.example.com/hook", made).ok).toBe(true);
    expect(checkUrl("https://hook.example.com/hook", made).ok).toBe(true);
  });
});
