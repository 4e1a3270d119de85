import { TaskState } from "@a2a-js/sdk";
import type { ThreadState } from "../inbox/store.js";

/** The spec's mapping of a thread's state to an A2A task state, with the status text. */
export const WAITING_FOR_OWNER = "Waiting for the owner";

export function taskStateOf(state: ThreadState): { state: TaskState; text?: string } {
  switch (state) {
    case "working":
      return { state: TaskState.TASK_STATE_WORKING };
    case "waiting_for_owner":
      return { state: TaskState.TASK_STATE_WORKING, text: WAITING_FOR_OWNER };
    case "input_required":
      return { state: TaskState.TASK_STATE_INPUT_REQUIRED };
    case "agreed":
      return { state: TaskState.TASK_STATE_COMPLETED };
    case "declined":
    case "cancelled":
    case "expired":
      return { state: TaskState.TASK_STATE_CANCELED };
    case "refused":
      return { state: TaskState.TASK_STATE_REJECTED };
  }
}
