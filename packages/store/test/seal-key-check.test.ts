import { checkSealKeys, generateKeyEntry, isStoreError, Keyring } from "@doorbell/store";
import { expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

// Issue 14 item 5: a process started with a keyring other than the one the other processes on the
// database seal with fails at start, with one line that names the fix.
forEachEngine((fixture) => {
  it("the same keys pass; other keys, or the same id with other bytes, fail with one line naming the fix", async () => {
    const db = (await fixture.createDatabase()).db;
    const k1 = generateKeyEntry();
    const k2 = generateKeyEntry();
    let now = 1_000;
    const clock = () => now++;
    await checkSealKeys(db, new Keyring([k1]), clock);
    await checkSealKeys(db, new Keyring([k1]), clock); // a second process with the same keys

    const refused = async (keyring: Keyring) => {
      const error = await checkSealKeys(db, keyring, clock).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isStoreError(error) && error.code).toBe("ERR_STORE_KEYRING_MISMATCH");
      const message = (error as Error).message;
      expect(message).not.toContain("\n");
      expect(message).toMatch(/doorbell keys export/);
      expect(message).toMatch(/DOORBELL_SEAL_KEYS/);
      return message;
    };
    // A process that generated its own key file.
    expect(await refused(new Keyring([generateKeyEntry()]))).toMatch(/lack key k/);
    // The same key id with other bytes.
    expect(await refused(new Keyring([{ id: k1.id, key: k2.key }]))).toMatch(/not the key of that id/);

    // A rotation: a process puts k2 in front and keeps k1; from then on k2 is required.
    await checkSealKeys(db, new Keyring([k2, k1]), clock);
    await refused(new Keyring([k1]));
    await checkSealKeys(db, new Keyring([k2]), clock);
  });
});
