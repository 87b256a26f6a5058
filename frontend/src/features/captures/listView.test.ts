import { describe, expect, it } from "vitest";
import {
  DEFAULT_VIEW,
  listQuery,
  PAGE_SIZE,
  pageCount,
  readListView,
  sortBy,
  writeListView,
} from "./listView";

describe("the captures list's view in the URL", () => {
  it("reads defaults from nothing and ignores values the API would refuse", () => {
    expect(readListView(new URLSearchParams())).toEqual(DEFAULT_VIEW);
    expect(
      readListView(new URLSearchParams(`sort=sha256&order=up&page=-2&q=${"x".repeat(300)}`)),
    ).toEqual({ ...DEFAULT_VIEW, q: "x".repeat(200) });
  });

  it("round-trips a view, leaving the defaults out of the URL", () => {
    const view = {
      sort: "size" as const,
      order: "asc" as const,
      q: "slow",
      finding: "loss",
      page: 3,
    };
    const params = writeListView(view);
    expect(params.toString()).toBe("sort=size&order=asc&q=slow&finding=loss&page=3");
    expect(readListView(params)).toEqual(view);
    expect(writeListView(DEFAULT_VIEW).toString()).toBe("");
  });

  it("flips the order of the sorted column and starts another at its natural order, on page 1", () => {
    const onPage4 = { ...DEFAULT_VIEW, page: 4 };
    expect(sortBy(onPage4, "created")).toEqual({ ...DEFAULT_VIEW, order: "asc", page: 1 });
    expect(sortBy(onPage4, "filename")).toMatchObject({ sort: "filename", order: "asc", page: 1 });
    expect(sortBy(onPage4, "size")).toMatchObject({ sort: "size", order: "desc" });
    // a sort without an order in the URL reads as that column's first order
    expect(readListView(new URLSearchParams("sort=filename")).order).toBe("asc");
  });

  it("asks the server for the view's page, searches trimmed and only when given", () => {
    expect(listQuery({ ...DEFAULT_VIEW, page: 3, q: "  a.pcap ", finding: " " })).toEqual({
      sort: "created",
      order: "desc",
      limit: PAGE_SIZE,
      offset: 2 * PAGE_SIZE,
      q: "a.pcap",
    });
    expect([pageCount(0), pageCount(PAGE_SIZE), pageCount(PAGE_SIZE + 1)]).toEqual([1, 1, 2]);
  });
});
