// What the captures list shows, kept in the URL (?sort=&order=&q=&finding=&page=) so a view can be
// bookmarked, shared and restored by the back button. Pure: unit-tested.

import type { CaptureListQuery } from "../../api/types";

export type CaptureSort = NonNullable<CaptureListQuery["sort"]>;
export type SortOrder = "asc" | "desc";

/** Rows on one page of the list. */
export const PAGE_SIZE = 50;

export interface ListView {
  readonly sort: CaptureSort;
  readonly order: SortOrder;
  /** Part of the file name. */
  readonly q: string;
  /** A finding's code or part of its title. */
  readonly finding: string;
  /** 1-based. */
  readonly page: number;
}

const SORTS: readonly CaptureSort[] = ["created", "filename", "size", "status", "top_finding"];
/** The order a click on a column starts with: newest, biggest and worst first; names A→Z. */
const FIRST_ORDER: Readonly<Record<CaptureSort, SortOrder>> = {
  created: "desc",
  filename: "asc",
  size: "desc",
  status: "asc",
  top_finding: "asc",
};
export const DEFAULT_VIEW: ListView = {
  sort: "created",
  order: "desc",
  q: "",
  finding: "",
  page: 1,
};

export function readListView(params: URLSearchParams): ListView {
  const sort = params.get("sort");
  const order = params.get("order");
  const page = Number(params.get("page"));
  const validSort = SORTS.includes(sort as CaptureSort) ? (sort as CaptureSort) : null;
  return {
    sort: validSort ?? DEFAULT_VIEW.sort,
    order:
      order === "asc" || order === "desc"
        ? order
        : validSort
          ? FIRST_ORDER[validSort]
          : DEFAULT_VIEW.order,
    q: (params.get("q") ?? "").slice(0, 200),
    finding: (params.get("finding") ?? "").slice(0, 200),
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

/** The URL parameters of `view`, defaults left out. */
export function writeListView(view: ListView): URLSearchParams {
  const params = new URLSearchParams();
  if (view.sort !== DEFAULT_VIEW.sort || view.order !== DEFAULT_VIEW.order) {
    params.set("sort", view.sort);
    params.set("order", view.order);
  }
  if (view.q) params.set("q", view.q);
  if (view.finding) params.set("finding", view.finding);
  if (view.page > 1) params.set("page", String(view.page));
  return params;
}

/** A click on a column's header: the other order of the same column, else the column's first. */
export function sortBy(view: ListView, sort: CaptureSort): ListView {
  const order = view.sort === sort ? (view.order === "asc" ? "desc" : "asc") : FIRST_ORDER[sort];
  return { ...view, sort, order, page: 1 };
}

/** The API query of the view's page. */
export function listQuery(view: ListView): CaptureListQuery {
  return {
    sort: view.sort,
    order: view.order,
    limit: PAGE_SIZE,
    offset: (view.page - 1) * PAGE_SIZE,
    ...(view.q.trim() ? { q: view.q.trim() } : {}),
    ...(view.finding.trim() ? { finding: view.finding.trim() } : {}),
  };
}

export function pageCount(total: number): number {
  return Math.max(1, Math.ceil(total / PAGE_SIZE));
}
