// Reading the capture's facts (DESIGN.md's `capture` object, untyped in the schema) defensively.

import type { Capture } from "../../api/types";

export function numberFact(capture: Capture, name: string): number | null {
  const value = capture.facts?.[name];
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

export function warningsOf(capture: Capture): string[] {
  const value = capture.facts?.warnings;
  return Array.isArray(value) ? value.filter((w): w is string => typeof w === "string") : [];
}
