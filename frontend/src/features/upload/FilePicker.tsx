import { useId, useRef } from "react";
import { useUploads } from "./UploadsContext";

/** The keyboard/click way to upload: a real file input behind a styled button. */
export function FilePicker({ label = "Choose capture files" }: { label?: string }) {
  const { start } = useUploads();
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  return (
    <>
      <input
        ref={input}
        id={id}
        className="visually-hidden"
        type="file"
        multiple
        accept=".pcap,.pcapng,.cap,.gz,.zst,application/vnd.tcpdump.pcap"
        aria-label={label}
        onChange={(event) => {
          const files = Array.from(event.currentTarget.files ?? []);
          if (files.length > 0) start(files);
          event.currentTarget.value = "";
        }}
      />
      <button
        type="button"
        className="button button--primary"
        onClick={() => input.current?.click()}
      >
        {label}
      </button>
    </>
  );
}
