/**
 * Rows per page offered by the paged lists (the request log, the activity trail). The
 * server clamps `limit` to 200, so no larger size is offered.
 */

export const PAGE_SIZES = [10, 25, 50, 100, 200] as const;
export const DEFAULT_PAGE_SIZE = 50;

/** The page size kept in the address, or the default when it is absent or not one offered. */
export function pageSizeFrom(param: string | undefined): number {
  const size = Number(param);
  return (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_PAGE_SIZE;
}

/** The address's parameter for a size: none for the default, so the address stays short. */
export function pageSizeParam(size: number): string | null {
  return size === DEFAULT_PAGE_SIZE ? null : String(size);
}
