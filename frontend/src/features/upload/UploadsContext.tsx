// The uploads of this browser tab: started from the drop zone or the picker, shown in the tray,
// each sending its bytes (XHR progress) and then handing over to the capture's analysis status.

import { useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from "react";
import { useNavigate } from "react-router";
import type { Capture } from "../../api/types";
import type { ProgressState } from "./progressState";
import { uploadErrorState } from "./progressState";
import { sendCapture } from "./sendCapture";
import { addSample, bytesPerSecond, type ProgressSample } from "./transferRate";

export interface UploadEntry {
  key: number;
  name: string;
  size: number;
  /** While sending, or when the server refused the file. */
  send: ProgressState;
  /** Once the server accepted the file: the analysis is followed through this capture. */
  captureId: string | null;
}

interface Uploads {
  entries: UploadEntry[];
  start: (files: readonly File[]) => void;
  dismiss: (key: number) => void;
}

const UploadsContext = createContext<Uploads | null>(null);

let nextKey = 1;

export function UploadsProvider({
  workspaceId,
  children,
}: {
  workspaceId: string | undefined;
  children: ReactNode;
}) {
  const [entries, setEntries] = useState<UploadEntry[]>([]);
  const navigate = useNavigate();
  const client = useQueryClient();

  const update = useCallback((key: number, change: Partial<UploadEntry>) => {
    setEntries((all) => all.map((e) => (e.key === key ? { ...e, ...change } : e)));
  }, []);

  const start = useCallback(
    (files: readonly File[]) => {
      const started = files.map((file) => ({
        file,
        entry: {
          key: nextKey++,
          name: file.name,
          size: file.size,
          send: { kind: "uploading", loaded: 0, total: file.size, bytesPerSecond: null },
          captureId: null,
        } satisfies UploadEntry,
      }));
      setEntries((all) => [...started.map((s) => s.entry), ...all]);
      for (const { file, entry } of started) {
        let samples: ProgressSample[] = [];
        sendCapture(file, {
          workspaceId,
          onProgress: (loaded, total) => {
            samples = addSample(samples, { atMs: performance.now(), loaded });
            update(entry.key, {
              send: { kind: "uploading", loaded, total, bytesPerSecond: bytesPerSecond(samples) },
            });
          },
        }).then(
          (accepted) => {
            const capture: Capture = accepted.capture;
            client.setQueryData(["capture", capture.id, "capture"], capture);
            void client.invalidateQueries({ queryKey: ["captures"] });
            update(entry.key, { captureId: capture.id });
            // One file: go straight to its page, where the analysis progress and then the
            // diagnosis appear. Several: stay, the tray follows each of them.
            if (files.length === 1) void navigate(`/captures/${capture.id}`);
          },
          (error: unknown) => update(entry.key, { send: uploadErrorState(error, file) }),
        );
      }
    },
    [client, navigate, update, workspaceId],
  );

  const dismiss = useCallback((key: number) => {
    setEntries((all) => all.filter((e) => e.key !== key));
  }, []);

  const value = useMemo(() => ({ entries, start, dismiss }), [entries, start, dismiss]);
  return <UploadsContext.Provider value={value}>{children}</UploadsContext.Provider>;
}

export function useUploads(): Uploads {
  const uploads = useContext(UploadsContext);
  if (!uploads) throw new Error("useUploads outside <UploadsProvider>");
  return uploads;
}
