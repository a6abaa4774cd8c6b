export function OrganisationScreen() {
  return <p className="muted">Not built yet.</p>;
}
