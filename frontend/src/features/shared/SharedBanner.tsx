/** Says plainly what a share-link visitor is looking at. */
export function SharedBanner() {
  return (
    <div className="shared-banner" role="note">
      <span className="shared-banner__badge">Shared</span>
      You are viewing a shared analysis, read-only. Nothing you do here changes it.
    </div>
  );
}
