import { useEffect, useState } from "react";
import {
  acquireDissector,
  type CaptureDissector,
  type DissectorState,
  releaseDissector,
} from "./session";

/** The capture's dissector (not started until `open()` is called) and its state. */
export function useDissector(capturePath: string): {
  dissector: CaptureDissector | null;
  state: DissectorState;
} {
  const [dissector, setDissector] = useState<CaptureDissector | null>(null);
  const [state, setState] = useState<DissectorState>({ status: "idle" });
  useEffect(() => {
    const d = acquireDissector(capturePath);
    setDissector(d);
    setState(d.state);
    const unsubscribe = d.subscribe(setState);
    return () => {
      unsubscribe();
      releaseDissector(d, capturePath);
    };
  }, [capturePath]);
  return { dissector, state };
}
