// Export of what a graph shows: a standalone SVG, all vectors (axes, marks and annotations cloned
// from the page, the dense canvas layers redrawn as paths by svgRecorder.ts), or a PNG rendered
// from it, and the series rows in view as CSV or JSON.

import { drawFrameVectors } from "./svgRecorder";
import { MARGIN } from "./types";

const STYLE_PROPERTIES = [
  "fill",
  "fill-opacity",
  "stroke",
  "stroke-width",
  "stroke-opacity",
  "stroke-dasharray",
  "opacity",
  "font-family",
  "font-size",
  "font-weight",
  "visibility",
] as const;

/** Copies the computed presentation styles onto the clone, so the file needs no stylesheet. */
function inlineStyles(source: Element, target: Element): void {
  const computed = getComputedStyle(source);
  const style = STYLE_PROPERTIES.map((p) => `${p}:${computed.getPropertyValue(p)}`).join(";");
  target.setAttribute("style", style);
  const a = source.children;
  const b = target.children;
  for (let i = 0; i < a.length && i < b.length; i++) inlineStyles(a[i] as Element, b[i] as Element);
}

export function frameToSvg(frame: HTMLElement): string {
  const svg = frame.querySelector("svg.chart-svg");
  const canvas = frame.querySelector("canvas.chart-canvas");
  if (!(svg instanceof SVGSVGElement) || !(canvas instanceof HTMLCanvasElement)) {
    throw new Error("no graph to export");
  }
  const clone = svg.cloneNode(true) as SVGSVGElement;
  inlineStyles(svg, clone);
  for (const el of clone.querySelectorAll(".chart-crosshair, .chart-zoom-box, .chart-overlay"))
    el.remove();
  const ns = "http://www.w3.org/2000/svg";
  clone.setAttribute("xmlns", ns);
  clone.removeAttribute("tabindex");
  const width = svg.width.baseVal.value;
  const height = svg.height.baseVal.value;
  const background = document.createElementNS(ns, "rect");
  background.setAttribute("width", String(width));
  background.setAttribute("height", String(height));
  background.setAttribute("fill", getComputedStyle(frame).backgroundColor || "#ffffff");
  // The dense layers under the axes and marks, as on screen, clipped to the plot as the canvas is.
  const clip = document.createElementNS(ns, "clipPath");
  clip.setAttribute("id", "tcplens-plot-area");
  const clipRect = document.createElementNS(ns, "rect");
  clipRect.setAttribute("width", String(canvas.clientWidth));
  clipRect.setAttribute("height", String(canvas.clientHeight));
  clip.append(clipRect);
  const defs = document.createElementNS(ns, "defs");
  defs.append(clip);
  const layers = document.createElementNS(ns, "g");
  layers.setAttribute("class", "chart-layers");
  layers.setAttribute("transform", `translate(${MARGIN.left},${MARGIN.top})`);
  layers.setAttribute("clip-path", "url(#tcplens-plot-area)");
  if (!drawFrameVectors(frame, layers)) throw new Error("no graph to export");
  clone.insertBefore(layers, clone.firstChild);
  clone.insertBefore(background, clone.firstChild);
  clone.insertBefore(defs, clone.firstChild);
  return new XMLSerializer().serializeToString(clone);
}

export async function frameToPng(frame: HTMLElement, scale = 2): Promise<Blob> {
  const svgText = frameToSvg(frame);
  const url = URL.createObjectURL(new Blob([svgText], { type: "image/svg+xml" }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.naturalWidth * scale;
    canvas.height = image.naturalHeight * scale;
    const ctx = canvas.getContext("2d");
    if (!ctx) throw new Error("no 2D canvas");
    ctx.scale(scale, scale);
    ctx.drawImage(image, 0, 0);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob(
        (blob) => (blob ? resolve(blob) : reject(new Error("PNG encoding failed"))),
        "image/png",
      ),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
