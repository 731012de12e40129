// Newest-first paging over a Map kept in insertion (creation) order, without copying the whole Map.

export function newestFirst<T>(items: Map<string, T>, offset: number, limit: number): T[] {
  const values = items.values();
  const total = items.size;
  const start = Math.max(0, total - offset - limit);
  const end = Math.max(0, total - offset);
  const page: T[] = [];
  let index = 0;
  for (const value of values) {
    if (index >= end) break;
    if (index >= start) page.push(value);
    index += 1;
  }
  return page.reverse();
}
