/** The local mailbox (no SMTP configured): mail kept sealed in holder_mail, read back on the dev page. */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLocalMailbox } from "../../src/mail/local-mailbox.js";
import { holderOn, T0 } from "../support/intents-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("stores the recipient and bodies sealed, the subject in clear, and lists newest first", async () => {
    const h = await holderOn(engine);
    expect(isLocalMailbox(h.ctx.mailer)).toBe(true);
    await h.mailbox.send({
      to: "one@example.sk",
      subject: "First",
      text: "text /manage/SECRET1",
      html: "<p>html /manage/SECRET1</p>",
    });
    h.clock.advance(1000);
    await h.mailbox.send({ to: "two@example.sk", subject: "Second", text: "t2", html: "<p>h2</p>" });
    const rows = await h.ctx.store.db.selectFrom("holder_mail").selectAll().execute();
    const raw = JSON.stringify(rows);
    for (const secret of ["one@example.sk", "two@example.sk", "SECRET1", "example.sk"])
      expect(raw).not.toContain(secret);
    expect(rows.map((r) => r.subject).sort()).toEqual(["First", "Second"]);

    const all = await h.mailbox.listMailbox();
    expect(all.map((m) => [m.to, m.subject, m.createdAt])).toEqual([
      ["two@example.sk", "Second", T0 + 1000],
      ["one@example.sk", "First", T0],
    ]);
    expect(all[1]).toMatchObject({ text: "text /manage/SECRET1", html: "<p>html /manage/SECRET1</p>" });
    expect((await h.mailbox.listMailbox({ to: " ONE@example.sk " })).map((m) => m.subject)).toEqual([
      "First",
    ]);
    expect(await h.mailbox.listMailbox({ limit: 1 })).toHaveLength(1);
  });

  it("a sealed body copied into another column does not open", async () => {
    const h = await holderOn(engine);
    await h.mailbox.send({ to: "one@example.sk", subject: "S", text: "t", html: "h" });
    const row = await h.ctx.store.db.selectFrom("holder_mail").selectAll().executeTakeFirstOrThrow();
    await h.ctx.store.db.updateTable("holder_mail").set({ html_body: row.text_body }).execute();
    await expect(h.mailbox.listMailbox()).rejects.toThrow();
  });
});
