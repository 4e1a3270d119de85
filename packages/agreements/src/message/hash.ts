import { canonicalHash } from "../canonical/hash.js";
import type { Message } from "./types.js";

/** "The hash of a message is the SHA-256 of its canonical bytes as lowercase hex." */
export const messageHash = (message: Message): string => canonicalHash(message);
