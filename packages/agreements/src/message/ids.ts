import { randomBytes, randomUUID } from "node:crypto";

/** A fresh lowercase UUID (version 4) for a message id, a thread or a record. */
export const newId = (): string => randomUUID();

/** 128 random bits as 22 characters of unpadded base64url. */
export const newNonce = (random: (size: number) => Uint8Array = randomBytes): string => {
  const bytes = random(16);
  if (bytes.byteLength !== 16) throw new RangeError("the random source must give 16 bytes");
  return Buffer.from(bytes).toString("base64url");
};
