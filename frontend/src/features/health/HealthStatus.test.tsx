import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../../api/http";
import { HealthStatus } from "./HealthStatus";

afterEach(cleanup);

describe("HealthStatus", () => {
  it("shows the version and the database state when the server is healthy", async () => {
    render(
      <HealthStatus load={async () => ({ status: "ok", version: "1.2.3", database: "ok" })} />,
    );
    expect(await screen.findByText("Server ok · database ok · version 1.2.3")).toBeTruthy();
  });

  it("shows the problem's detail when the server answers with a problem", async () => {
    const problem = {
      type: "urn:tcplens:problem:service_unavailable",
      title: "Service unavailable",
      status: 503,
      detail: "the database does not answer",
      code: "service_unavailable",
    };
    render(
      <HealthStatus
        load={async () => {
          throw new ApiError(problem);
        }}
      />,
    );
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toBe("Server unavailable: the database does not answer");
  });

  it("says the server does not answer when the request itself fails", async () => {
    render(
      <HealthStatus
        load={async () => {
          throw new TypeError("Failed to fetch");
        }}
      />,
    );
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toBe("Server unavailable: the server does not answer");
  });
});
