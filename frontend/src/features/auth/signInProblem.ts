import { ApiError, errorMessage } from "../../api/http";

/** What to say when signing in (after creating the account, for "signup") failed. */
export function signInProblem(mode: "login" | "signup", error: unknown): string {
  // Sign-up answered as it always does, yet this password does not open the address's account:
  // the address had one already (the person knows it; the sign-up answer itself did not say).
  if (mode === "signup" && error instanceof ApiError && error.problem.code === "bad_credentials")
    return "This password does not open an account with this address. If you already have an account, sign in with its password.";
  return errorMessage(error);
}
