import { type InputHTMLAttributes, useId } from "react";

/** A labelled text input of a stacked form (sign-in, sign-up, the account's password change),
 * with an optional hint under it that the input is described by. */
export function TextField({
  label,
  hint,
  value,
  onValue,
  ...input
}: {
  label: string;
  hint?: string;
  value: string;
  onValue: (value: string) => void;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "id" | "className" | "value" | "onChange">) {
  const id = useId();
  const hintId = useId();
  return (
    <div className="field">
      <label className="field__label" htmlFor={id}>
        {label}
      </label>
      <input
        {...input}
        id={id}
        className="input"
        aria-describedby={hint ? hintId : undefined}
        value={value}
        onChange={(e) => onValue(e.currentTarget.value)}
      />
      {hint && (
        <p id={hintId} className="muted field__hint">
          {hint}
        </p>
      )}
    </div>
  );
}
