// Upload one file with XMLHttpRequest: fetch() cannot report upload progress, XHR's upload
// events can (bytes sent so far), which the progress bar and the speed figure need.

import { CSRF_HEADER, csrfToken } from "../../api/csrf";
import { ApiError, problemFrom } from "../../api/http";
import type { UploadAccepted } from "../../api/types";

export interface SendOptions {
  workspaceId?: string | undefined;
  onProgress: (loaded: number, total: number) => void;
  signal?: AbortSignal | undefined;
}

export const UPLOAD_URL = "/api/v1/captures";

export function sendCapture(file: File, options: SendOptions): Promise<UploadAccepted> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const query = options.workspaceId
      ? `?workspace_id=${encodeURIComponent(options.workspaceId)}`
      : "";
    xhr.open("POST", `${UPLOAD_URL}${query}`);
    xhr.responseType = "json";
    xhr.setRequestHeader("Accept", "application/json");
    const token = csrfToken();
    if (token) xhr.setRequestHeader(CSRF_HEADER, token);

    xhr.upload.onprogress = (event) => {
      options.onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(xhr.response as UploadAccepted);
      } else {
        reject(new ApiError(problemFrom(xhr, xhr.response)));
      }
    };
    xhr.onerror = () =>
      reject(new Error("the upload was interrupted: the server could not be reached"));
    xhr.onabort = () => reject(new DOMException("the upload was cancelled", "AbortError"));
    options.signal?.addEventListener("abort", () => xhr.abort(), { once: true });

    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}
