import { type ListTasksRequest, type ListTasksResponse, Task } from "@a2a-js/sdk";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { asTables, type Database } from "@doorbell/store";
import type { TaskTables } from "../schema.js";

/**
 * The SDK's task store in SQL (SQLite or PostgreSQL through @doorbell/store), so the tasks that
 * carry agreement threads survive a restart: an answer the owner approves after the agent came
 * back still lands on the task the other side reads with `tasks/get`. Tasks are kept as the SDK's
 * own JSON (`Task.toJSON`), scoped by tenant and by the caller's user name, as the SDK's in-memory
 * store scopes them.
 */

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

const scope = (context: ServerCallContext | undefined) => ({
  tenant: context?.tenant ?? "",
  owner: context?.user?.isAuthenticated ? context.user.userName : "",
});

/** Page tokens are the offset, opaque to the caller. */
const offsetOf = (token: string): number => {
  const n = Number.parseInt(Buffer.from(token, "base64url").toString("utf8"), 10);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
};

/** A TaskStore on a database migrated with `agreementsInboxMigrations` (version 3 adds its table). */
export function createSqlTaskStore<DB>(handle: Database<DB>): TaskStore {
  const db = asTables<TaskTables>(handle.db);
  const read = (body: string): Task => Task.fromJSON(JSON.parse(body));
  return {
    async save(task, context) {
      const row = {
        ...scope(context),
        id: task.id,
        context_id: task.contextId,
        state: task.status?.state ?? 0,
        status_at: task.status?.timestamp ?? "",
        body: JSON.stringify(Task.toJSON(task)),
      };
      await db
        .insertInto("agreements_a2a_task_store")
        .values(row)
        .onConflict((oc) =>
          oc.columns(["tenant", "owner", "id"]).doUpdateSet({
            context_id: row.context_id,
            state: row.state,
            status_at: row.status_at,
            body: row.body,
          }),
        )
        .execute();
    },
    async load(taskId, context) {
      const { tenant, owner } = scope(context);
      const row = await db
        .selectFrom("agreements_a2a_task_store")
        .select("body")
        .where("tenant", "=", tenant)
        .where("owner", "=", owner)
        .where("id", "=", taskId)
        .executeTakeFirst();
      return row === undefined ? undefined : read(row.body);
    },
    async list(params: ListTasksRequest, context): Promise<ListTasksResponse> {
      const { tenant, owner } = scope(context);
      const pageSize = Math.min(Math.max(params.pageSize ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
      const offset = params.pageToken ? offsetOf(params.pageToken) : 0;
      let query = db
        .selectFrom("agreements_a2a_task_store")
        .where("tenant", "=", tenant)
        .where("owner", "=", owner);
      if (params.contextId) query = query.where("context_id", "=", params.contextId);
      if (params.status !== undefined && params.status !== 0)
        query = query.where("state", "=", params.status);
      if (params.statusTimestampAfter) query = query.where("status_at", ">", params.statusTimestampAfter);
      const total = await query.select((eb) => eb.fn.countAll<number | string>().as("n")).executeTakeFirst();
      const rows = await query
        .select("body")
        .orderBy("status_at", "desc")
        .orderBy("id", "desc")
        .limit(pageSize)
        .offset(offset)
        .execute();
      const totalSize = Number(total?.n ?? 0);
      const tasks = rows.map((row) => {
        const task = read(row.body);
        return params.includeArtifacts ? task : { ...task, artifacts: [] };
      });
      const next = offset + tasks.length;
      return {
        tasks,
        nextPageToken: next < totalSize ? Buffer.from(String(next)).toString("base64url") : "",
        pageSize,
        totalSize,
      };
    },
  };
}
