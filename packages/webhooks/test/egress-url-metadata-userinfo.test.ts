// The URL stage refuses cloud metadata host names and an empty user-info part (`:@`), in
// production and in development alike, before any name is resolved: a metadata name must not
// depend on what the resolver answers, and `https://:@host/` is read differently by other parsers.
import { describe, expect, it } from "vitest";
import { checkUrl, developmentPolicy, productionPolicy } from "../src/egress/index.js";

const prod = productionPolicy();
const dev = developmentPolicy();

describe("checkUrl refuses metadata names and empty user info", () => {
  it.each([
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://METADATA.google.internal./computeMetadata/v1/",
    "https://instance-data.ec2.internal/latest/meta-data/",
    "https://metadata.tencentyun.com/latest/meta-data/",
  ])("%s is refused as a metadata service in production and development", (url) => {
    for (const policy of [prod, dev]) {
      expect(checkUrl(url, policy)).toEqual({
        ok: false,
        reason: "the URL names a cloud metadata service",
      });
    }
  });

  it.each(["http://metadata/computeMetadata/v1/", "http://instance-data/latest/meta-data/"])(
    "the single-label %s is refused even under the development policy",
    (url) => {
      expect(checkUrl(url, dev)).toEqual({ ok: false, reason: "the URL names a cloud metadata service" });
    },
  );

  it("does not mistake a look-alike for a metadata name", () => {
    expect(checkUrl("https://metadata.example.com/", prod).ok).toBe(true);
    expect(checkUrl("https://google.internal.example.com/", prod).ok).toBe(true);
  });

  it.each([
    "https://:@hook.example.com/",
    "https://@hook.example.com/",
    "https://:@hook.example.com:443/hook",
    "https:\\\\:@hook.example.com/",
    " https://:@hook.example.com/",
  ])("%s (empty user info) is refused", (url) => {
    for (const policy of [prod, dev]) {
      expect(checkUrl(url, policy)).toEqual({
        ok: false,
        reason: "the URL must not contain a user name or password",
      });
    }
  });

  it("still allows an @ after the host: in the path, the query or the fragment", () => {
    expect(checkUrl("https://hook.example.com/a@b", prod).ok).toBe(true);
    expect(checkUrl("https://hook.example.com/?to=a@b", prod).ok).toBe(true);
    expect(checkUrl("https://hook.example.com/#a@b", prod).ok).toBe(true);
  });
});
