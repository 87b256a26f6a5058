import { describe, expect, it } from "vitest";
import { ApiError } from "../../api/http";
import { signInProblem } from "./signInProblem";

const refused = (status: number, code: string, detail: string) =>
  new ApiError({ type: "about:blank", title: "t", status, detail, code });

describe("what a failed sign-in or sign-up says", () => {
  it("after a sign-up, a password that opens nothing points to signing in", () => {
    const wrong = refused(401, "bad_credentials", "wrong e-mail address or password");
    expect(signInProblem("signup", wrong)).toContain("sign in with its password");
    expect(signInProblem("login", wrong)).toBe("wrong e-mail address or password");
  });

  it("passes on the server's words for anything else", () => {
    const weak = refused(422, "weak_password", "add another word or two");
    expect(signInProblem("signup", weak)).toBe("add another word or two");
  });
});
