import { useId, useState } from "react";

/** A read-only value with a Copy button (share URLs, API tokens, commands). */
export function CopyField({
  label,
  value,
  multiline = false,
}: {
  label: string;
  value: string;
  multiline?: boolean;
}) {
  const id = useId();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard refused (insecure origin, permissions): select it so Ctrl+C works.
      const field = document.getElementById(id);
      if (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) field.select();
    }
    setCopied(true);
    window.setTimeout(() => setCopied(false), 1500);
  };
  return (
    <div className="copy-field">
      <label className="field__label" htmlFor={id}>
        {label}
      </label>
      <div className="copy-field__row">
        {multiline ? (
          <textarea
            id={id}
            className="input input--mono"
            readOnly
            value={value}
            rows={value.split("\n").length}
            onFocus={(e) => e.currentTarget.select()}
          />
        ) : (
          <input
            id={id}
            className="input input--mono"
            readOnly
            value={value}
            onFocus={(e) => e.currentTarget.select()}
          />
        )}
        <button type="button" className="button" onClick={() => void copy()}>
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
    </div>
  );
}
