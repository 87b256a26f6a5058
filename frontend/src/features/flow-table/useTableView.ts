// The flow table's sort and filter live in the URL (?sort=&order=&q=&factor=), so a shared link
// opens the table as its author saw it. The default view is left out of the URL.

import { useCallback, useMemo } from "react";
import { useSearchParams } from "react-router";
import { DEFAULT_VIEW, isSortKey, type TableView } from "./flowRows";

export function useTableView(): [TableView, (view: TableView) => void] {
  const [params, setParams] = useSearchParams();
  const view = useMemo<TableView>(() => {
    const sort = params.get("sort");
    const order = params.get("order");
    return {
      sort: isSortKey(sort) ? sort : DEFAULT_VIEW.sort,
      order: order === "asc" || order === "desc" ? order : DEFAULT_VIEW.order,
      query: params.get("q") ?? "",
      factor: params.get("factor") ?? "",
    };
  }, [params]);

  const setView = useCallback(
    (next: TableView) => {
      setParams(
        (current) => {
          const out = new URLSearchParams(current);
          const put = (name: string, value: string, fallback: string) => {
            if (value === fallback) out.delete(name);
            else out.set(name, value);
          };
          if (next.sort === DEFAULT_VIEW.sort && next.order === DEFAULT_VIEW.order) {
            out.delete("sort");
            out.delete("order");
          } else {
            out.set("sort", next.sort);
            out.set("order", next.order);
          }
          put("q", next.query, "");
          put("factor", next.factor, "");
          return out;
        },
        { replace: true },
      );
    },
    [setParams],
  );
  return [view, setView];
}
