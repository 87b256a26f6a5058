import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { PacketDetails } from "./PacketDetails";

afterEach(cleanup);

describe("PacketDetails", () => {
  it("offers the packets only to a viewer who may have them", () => {
    const { unmount } = render(
      <PacketDetails
        capturePath="/api/v1/shared/token"
        flowId={1}
        allowed={false}
        selected={null}
        onSelect={() => undefined}
      />,
    );
    expect(screen.getByLabelText("Packet details").textContent).toContain(
      "opens the analysis only",
    );
    expect(screen.queryByRole("button", { name: "list this flow's packets" })).toBeNull();
    unmount();

    render(
      <PacketDetails
        capturePath="/api/v1/captures/c"
        flowId={1}
        allowed={true}
        selected={null}
        onSelect={() => undefined}
      />,
    );
    expect(screen.getByRole("button", { name: "list this flow's packets" })).toBeTruthy();
  });
});
