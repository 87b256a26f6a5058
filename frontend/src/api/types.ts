// Names for the generated schema types the SPA uses (schema.gen.ts is generated: do not edit it).

import type { components, operations } from "./schema.gen";

type Schemas = components["schemas"];

export type Capture = Schemas["CaptureOut"];
export type CapturePage = Schemas["CapturePageOut"];
export type UploadAccepted = Schemas["UploadAccepted"];
export type Flow = Schemas["FlowOut"];
export type FlowPage = Schemas["FlowPageOut"];
export type FlowFrames = Schemas["FlowFramesOut"];
export type Finding = Schemas["FindingOut"];
export type Session = Schemas["SessionOut"];
export type Workspace = Schemas["WorkspaceOut"];
export type Member = Schemas["MemberOut"];
export type ApiToken = Schemas["TokenOut"];
export type ApiTokenIssued = Schemas["TokenIssued"];
export type TokenScope = ApiToken["scopes"][number];
export type ShareLink = Schemas["ShareLinkOut"];
export type ShareLinkIssued = Schemas["ShareLinkIssued"];
export type WorkspaceShareLink = Schemas["WorkspaceShareLinkOut"];
export type CaptureStatus = Capture["status"];
export type IfFixed = Schemas["IfFixed"];
export type Confidence = Schemas["Confidence"];
export type Comparison = Schemas["ComparisonOut"];
export type ComparedTransfer = Schemas["ComparedTransfer"];
export type CaptureListQuery = NonNullable<
  operations["list_captures_api_v1_captures_get"]["parameters"]["query"]
>;
