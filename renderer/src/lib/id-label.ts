/**
 * How an id reads when its name is not known (a revoked key, a project of another
 * organisation in a shared address): one wording for filters and chart series alike.
 */

/** A uuid shortened to something a reader can tell apart and search for. */
export function shortId(id: string): string {
  return id.length > 8 ? `${id.slice(0, 8)}…` : id;
}

/** "Unknown project (11111111…)". Model route ids are names already, so they are not shortened. */
export function unknownLabel(kind: string, id: string, shorten = true): string {
  return `Unknown ${kind} (${shorten ? shortId(id) : id})`;
}
