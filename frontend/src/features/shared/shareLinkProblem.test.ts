import { describe, expect, it } from "vitest";
import { ApiError } from "../../api/http";
import { shareLinkProblem } from "./shareLinkProblem";

const refused = (status: number, code: string) =>
  new ApiError({ type: "about:blank", title: "t", status, detail: "d", code });

describe("why a share link opened nothing", () => {
  it("names a revoked and an expired link from the shared API's codes", () => {
    expect(shareLinkProblem(refused(410, "share_revoked"))).toBe("revoked");
    expect(shareLinkProblem(refused(404, "share_link_revoked"))).toBe("revoked");
    expect(shareLinkProblem(refused(410, "share_expired"))).toBe("expired");
    expect(shareLinkProblem(refused(404, "share_link_expired"))).toBe("expired");
  });

  it("says nothing more than 'opens nothing' when the API does not tell", () => {
    expect(shareLinkProblem(refused(404, "share_link_not_found"))).toBe("unknown");
    expect(shareLinkProblem(refused(410, "gone"))).toBe("unknown");
  });

  it("leaves other failures to the page", () => {
    expect(shareLinkProblem(refused(503, "service_unavailable"))).toBeNull();
    expect(shareLinkProblem(new Error("offline"))).toBeNull();
  });
});
