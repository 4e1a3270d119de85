// writeFileAtomically and readPrivateFile: the temp-file-and-rename write and the read the agent
// state and the MCP Events cursor file share. Only in a fresh folder under the system temp directory.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readPrivateFile, writeFileAtomically } from "../src/index.js";

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), "doorbell-atomic-"));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("writeFileAtomically", () => {
  it("writes the exact text with the mode given and leaves no temporary file", async () => {
    const target = path.join(folder, "state.json");
    await writeFileAtomically(target, '{"a":1}\n', { mode: 0o600 });
    expect(await readFile(target, "utf8")).toBe('{"a":1}\n');
    if (process.platform !== "win32") expect((await stat(target)).mode & 0o777).toBe(0o600);
    expect(await readdir(folder)).toEqual(["state.json"]);
  });

  it("replaces an existing file whole", async () => {
    const target = path.join(folder, "state.json");
    await writeFile(target, "old and longer than the new text");
    await writeFileAtomically(target, "new", { mode: 0o600 });
    expect(await readFile(target, "utf8")).toBe("new");
    expect(await readdir(folder)).toEqual(["state.json"]);
  });

  it("throws the error as it came and removes the temporary file when the rename fails", async () => {
    // A folder that is not empty cannot be replaced by a file.
    const target = path.join(folder, "a-folder");
    await mkdir(path.join(target, "inside"), { recursive: true });
    await expect(writeFileAtomically(target, "text", { mode: 0o600 })).rejects.toMatchObject({
      code: expect.stringMatching(/^E/),
    });
    expect(await readdir(folder)).toEqual(["a-folder"]);
  });

  it("throws when the folder does not exist", async () => {
    const target = path.join(folder, "missing", "state.json");
    await expect(writeFileAtomically(target, "text", { mode: 0o600 })).rejects.toMatchObject({
      code: "ENOENT",
    });
  });
});

describe("readPrivateFile", () => {
  it("reads the text and sets the file back to the mode given", async () => {
    const target = path.join(folder, "state.json");
    await writeFile(target, "secret\n");
    await chmod(target, 0o644);
    expect(await readPrivateFile(target, { mode: 0o600 })).toBe("secret\n");
    if (process.platform !== "win32") expect((await stat(target)).mode & 0o777).toBe(0o600);
  });

  it("is undefined for a file that does not exist, and throws any other error as it came", async () => {
    expect(await readPrivateFile(path.join(folder, "missing.json"), { mode: 0o600 })).toBeUndefined();
    await expect(readPrivateFile(folder, { mode: 0o600 })).rejects.toMatchObject({ code: "EISDIR" });
  });
});
