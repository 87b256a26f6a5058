import { type ReactNode, useEffect, useRef, useState } from "react";
import { useUploads } from "./UploadsContext";

function hasFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes("Files");
}

/**
 * Files can be dropped anywhere on the page: while files are dragged over the window a full-page
 * overlay says where they go. Counting enter/leave pairs keeps the overlay steady over children.
 */
export function DropZone({ children }: { children: ReactNode }) {
  const { start } = useUploads();
  const [dragging, setDragging] = useState(false);
  const depth = useRef(0);

  useEffect(() => {
    const enter = (event: DragEvent) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth.current += 1;
      setDragging(true);
    };
    const over = (event: DragEvent) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
    };
    const leave = (event: DragEvent) => {
      if (!hasFiles(event)) return;
      depth.current = Math.max(0, depth.current - 1);
      if (depth.current === 0) setDragging(false);
    };
    const drop = (event: DragEvent) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth.current = 0;
      setDragging(false);
      const files = Array.from(event.dataTransfer?.files ?? []);
      if (files.length > 0) start(files);
    };
    window.addEventListener("dragenter", enter);
    window.addEventListener("dragover", over);
    window.addEventListener("dragleave", leave);
    window.addEventListener("drop", drop);
    return () => {
      window.removeEventListener("dragenter", enter);
      window.removeEventListener("dragover", over);
      window.removeEventListener("dragleave", leave);
      window.removeEventListener("drop", drop);
    };
  }, [start]);

  return (
    <>
      {children}
      {dragging && (
        <div className="drop-overlay" aria-hidden="true">
          <div className="drop-overlay__card">
            <p className="drop-overlay__title">Drop to analyse</p>
            <p className="drop-overlay__hint">pcap or pcapng, also .gz / .zst — several at once</p>
          </div>
        </div>
      )}
    </>
  );
}
