import { describe, expect, it } from "vitest";
import type { Workspace } from "../api/types";
import { pickWorkspace } from "./workspace";

const mine: Workspace = { id: "w-mine", name: "me@example.com", role: "owner" };
const team: Workspace = { id: "w-team", name: "Network team", role: "member" };

describe("pickWorkspace", () => {
  it("follows the URL first, then the last choice, then the user's own workspace", () => {
    expect(pickWorkspace([team, mine], "w-team", "w-mine")).toBe(team);
    expect(pickWorkspace([team, mine], null, "w-team")).toBe(team);
    expect(pickWorkspace([team, mine], null, null)).toBe(mine);
    expect(pickWorkspace([team, mine], "w-gone", "w-gone")).toBe(mine);
  });

  it("falls back to any workspace, or none", () => {
    expect(pickWorkspace([team], null, null)).toBe(team);
    expect(pickWorkspace([], "w-team", null)).toBeUndefined();
  });
});
